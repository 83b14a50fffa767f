package experiment

import (
	"fmt"
	"os"
	"path/filepath"

	"go.yaml.in/yaml/v3"

	"github.com/inferload/inferload/record"
)

// Rebuilt is what Rebuild recomputed, with what it had to tolerate.
type Rebuilt struct {
	Summary *record.Summary
	// TruncatedRecords is 1 when the last record line was cut short (the
	// run was killed mid-write); that record is lost, the rest are used.
	TruncatedRecords int
}

// Rebuild recomputes summary.json from a run directory's records and events,
// exactly as the live run computed it, and writes it back. It works on runs
// that were killed: a missing run_end means the run was cut short, and the
// window ends at the last completion.
func Rebuild(dir string) (*Rebuilt, error) {
	info, err := readRunInfo(dir)
	if err != nil {
		return nil, err
	}
	agg := record.NewAggregate()
	n := 0
	stats, err := record.ReadRecords(filepath.Join(dir, RecordsFile), func(r *record.Result) error {
		agg.Add(r)
		n++
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("reading records of %s: %w", dir, err)
	}
	if n == 0 {
		return nil, fmt.Errorf("%s: %w (was the run stopped before any request finished?)", dir, errNoRecords)
	}
	s := agg.Summary(info)
	if err := record.WriteSummary(filepath.Join(dir, SummaryFile), s); err != nil {
		return nil, err
	}
	return &Rebuilt{Summary: s, TruncatedRecords: stats.Truncated}, nil
}

// readRunInfo recovers the run's name and mode from plan.yaml and its clock
// marks from events.jsonl.
func readRunInfo(dir string) (record.RunInfo, error) {
	var info record.RunInfo
	raw, err := os.ReadFile(filepath.Join(dir, PlanFile))
	if err != nil {
		return info, fmt.Errorf("%s is not a run directory: %w", dir, err)
	}
	var p struct {
		Name string `yaml:"name"`
		Load struct {
			Rate float64 `yaml:"rate"`
		} `yaml:"load"`
	}
	if err := yaml.Unmarshal(raw, &p); err != nil {
		return info, fmt.Errorf("%s: %w", filepath.Join(dir, PlanFile), err)
	}
	info.Name, info.Mode = p.Name, record.ModeClosed
	if p.Load.Rate > 0 {
		info.Mode = record.ModeOpen
	}
	sawEnd := false
	_, err = record.ReadEvents(filepath.Join(dir, EventsFile), func(e *record.Event) error {
		info.Apply(e)
		sawEnd = sawEnd || e.Kind == record.EventRunEnd
		return nil
	})
	if err != nil {
		return info, fmt.Errorf("reading events of %s: %w", dir, err)
	}
	if !sawEnd {
		info.Interrupted = true
	}
	return info, nil
}
