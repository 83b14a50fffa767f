package analyze

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/inferload/inferload/record"
	"github.com/inferload/inferload/rundir"
)

// ErrNotRunDir marks a directory without records.jsonl.
var ErrNotRunDir = errors.New("not a run directory")

// LoadRun reads what a comparison needs from a run directory: every record
// (measured ones for latencies and failures, all successes for
// throughput), the measured window from events.jsonl, and env.json. A
// run that was killed still loads: its window ends at the last completion.
func LoadRun(dir string) (*RunSamples, error) {
	info, err := loadWindow(dir)
	if err != nil {
		return nil, err
	}
	rs := NewRunSamples(filepath.Base(filepath.Clean(dir)))
	var d deliveries
	var lastDone int64
	n := 0
	_, err = rundir.ReadRecords(rundir.RecordsFile(dir), func(r *record.Result) error {
		rs.Add(r)
		d.add(r)
		lastDone = max(lastDone, r.DoneUS())
		n++
		return nil
	})
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%s: %w (no %s or %s)", dir, ErrNotRunDir, rundir.Records, rundir.RecordsPlain)
	}
	if err != nil {
		return nil, fmt.Errorf("reading records of %s: %w", dir, err)
	}
	if n == 0 {
		return nil, fmt.Errorf("%s: no records to compare (was the run stopped before any request finished?)", dir)
	}
	rs.RequestsPerS, rs.OutputTokensPerS = d.window(info.WarmupEndUS, windowEnd(info, lastDone))
	if rs.Env, err = loadEnv(dir); err != nil {
		return nil, err
	}
	return rs, nil
}

// windowEnd is when issuing stopped, else the run's end, else the last
// completion (a killed run has neither event).
func windowEnd(info record.RunInfo, lastDoneUS int64) int64 {
	switch {
	case info.MeasureEndUS > 0:
		return info.MeasureEndUS
	case info.EndUS > 0:
		return info.EndUS
	}
	return lastDoneUS
}

// loadWindow reads the warm-up end and issuing stop from events.jsonl; a
// missing file means no warm-up and an unknown end.
func loadWindow(dir string) (record.RunInfo, error) {
	var info record.RunInfo
	_, err := rundir.ReadEvents(filepath.Join(dir, rundir.Events), func(e *record.Event) error {
		info.Apply(e)
		return nil
	})
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return info, fmt.Errorf("reading events of %s: %w", dir, err)
	}
	return info, nil
}

// loadEnv decodes env.json; nil without error when the run has none.
func loadEnv(dir string) (map[string]any, error) {
	raw, err := os.ReadFile(filepath.Join(dir, rundir.Env))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", rundir.Env, err)
	}
	var env map[string]any
	if err := json.Unmarshal(raw, &env); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, rundir.Env), err)
	}
	return env, nil
}
