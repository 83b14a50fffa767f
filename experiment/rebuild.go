package experiment

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"go.yaml.in/yaml/v3"

	"github.com/inferload/inferload/analyze"
	"github.com/inferload/inferload/observe"
	"github.com/inferload/inferload/plan"
	"github.com/inferload/inferload/record"
	"github.com/inferload/inferload/report"
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
	buckets, err := planLengthBuckets(dir)
	if err != nil {
		return nil, err
	}
	agg.SetInputBuckets(buckets)
	if err := applyPlanJudging(agg, dir); err != nil {
		return nil, err
	}
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
	keepExperiment(dir, s)
	samples, err := readTelemetry(dir)
	if err != nil {
		return nil, err
	}
	observe.Summarize(samples, info, s)
	p, err := readPlanLoad(dir)
	if err != nil {
		return nil, err
	}
	if err := judgeRun(s, p, agg, info); err != nil {
		return nil, err
	}
	exprs, err := planThresholds(dir)
	if err != nil {
		return nil, err
	}
	if err := applyThresholds(s, exprs); err != nil {
		return nil, err
	}
	if err := record.WriteSummary(filepath.Join(dir, SummaryFile), s); err != nil {
		return nil, err
	}
	if err := WriteReport(dir, s); err != nil {
		return nil, err
	}
	return &Rebuilt{Summary: s, TruncatedRecords: stats.Truncated}, nil
}

// applyThresholds evaluates the plan's thresholds into s.Thresholds.
func applyThresholds(s *record.Summary, exprs []string) error {
	if len(exprs) == 0 {
		return nil
	}
	ths, err := analyze.ParseThresholds(exprs)
	if err != nil {
		return err
	}
	s.Thresholds, err = analyze.Evaluate(ths, s)
	return err
}

// planThresholds reads the thresholds a run's plan.yaml holds.
func planThresholds(dir string) ([]string, error) {
	path := filepath.Join(dir, PlanFile)
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%s is not a run directory: %w", dir, err)
	}
	var p struct {
		Thresholds []string `yaml:"thresholds"`
	}
	if err := yaml.Unmarshal(raw, &p); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return p.Thresholds, nil
}

// WriteReport draws report.html from the run directory's files and s (the
// summary just computed), so a live run and a rebuild draw the same page.
// Every record is read once more, into a bounded digest.
func WriteReport(dir string, s *record.Summary) error {
	in := &report.HTMLInput{Summary: s, Digest: report.NewDigest()}
	if _, err := record.ReadRecords(filepath.Join(dir, RecordsFile), func(r *record.Result) error {
		in.Digest.Add(r)
		return nil
	}); err != nil {
		return fmt.Errorf("report of %s: %w", dir, err)
	}
	if _, err := record.ReadSeries(filepath.Join(dir, SeriesFile), func(w *record.Window) error {
		in.Series = append(in.Series, *w)
		return nil
	}); err != nil {
		return fmt.Errorf("report of %s: %w", dir, err)
	}
	if _, err := record.ReadEvents(filepath.Join(dir, EventsFile), func(e *record.Event) error {
		in.Events = append(in.Events, *e)
		return nil
	}); err != nil {
		return fmt.Errorf("report of %s: %w", dir, err)
	}
	if raw, err := os.ReadFile(filepath.Join(dir, EnvFile)); err == nil {
		if err := json.Unmarshal(raw, &in.Env); err != nil {
			return fmt.Errorf("report of %s: %s: %w", dir, EnvFile, err)
		}
	}
	samples, err := readTelemetry(dir)
	if err != nil {
		return fmt.Errorf("report of %s: %w", dir, err)
	}
	in.Telemetry = samples
	if in.Comparison, err = readComparison(dir); err != nil {
		return fmt.Errorf("report of %s: %w", dir, err)
	}
	return writeFileAtomic(filepath.Join(dir, ReportFile), func(w io.Writer) error { return report.WriteHTML(w, in) })
}

// writeFileAtomic writes path through a temporary file renamed over it, so
// a reader never opens half a report.
func writeFileAtomic(path string, write func(io.Writer) error) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".tmp-*")
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	defer os.Remove(tmp.Name()) // no-op once renamed
	err = write(tmp)
	if err == nil {
		err = tmp.Chmod(0o644)
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
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
		Name string           `yaml:"name"`
		Load plan.LoadOptions `yaml:"load"`
	}
	if err := yaml.Unmarshal(raw, &p); err != nil {
		return info, fmt.Errorf("%s: %w", filepath.Join(dir, PlanFile), err)
	}
	info.Name, info.Mode = p.Name, p.Load.Mode()
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

// readPlanLoad reads the load section of a run's plan.yaml, as the live
// run resolved it, without validating the rest (a rebuild only needs what
// judges the run).
func readPlanLoad(dir string) (*plan.Plan, error) {
	raw, err := os.ReadFile(filepath.Join(dir, PlanFile))
	if err != nil {
		return nil, err
	}
	var doc struct {
		Load plan.LoadOptions `yaml:"load"`
	}
	if err := yaml.Unmarshal(raw, &doc); err != nil {
		return nil, fmt.Errorf("%s: load: %w", filepath.Join(dir, PlanFile), err)
	}
	return &plan.Plan{Load: doc.Load}, nil
}

// readComparison reads compare.json, the comparison with a baseline that
// `inferload compare --embed` left in the run directory; nil when absent.
func readComparison(dir string) (*analyze.Comparison, error) {
	raw, err := os.ReadFile(filepath.Join(dir, CompareFile))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var c analyze.Comparison
	if err := json.Unmarshal(raw, &c); err != nil {
		return nil, fmt.Errorf("%s: %w", CompareFile, err)
	}
	return &c, nil
}

// EmbedComparison stores c in the current run's directory as compare.json
// and rewrites its report.html with the comparison after the headline.
func EmbedComparison(dir string, c *analyze.Comparison) error {
	s, err := record.ReadSummary(filepath.Join(dir, SummaryFile))
	if err != nil {
		return err
	}
	b, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return fmt.Errorf("encoding the comparison: %w", err)
	}
	if err := writeFileAtomic(filepath.Join(dir, CompareFile), func(w io.Writer) error {
		_, err := w.Write(append(b, '\n'))
		return err
	}); err != nil {
		return err
	}
	return WriteReport(dir, s)
}
