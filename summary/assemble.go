package summary

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"

	"github.com/inferload/inferload/analyze"
	"github.com/inferload/inferload/internal/inputfile"
	"github.com/inferload/inferload/observe"
	"github.com/inferload/inferload/plan"
	"github.com/inferload/inferload/record"
	"github.com/inferload/inferload/report"
	"github.com/inferload/inferload/rundir"
)

// errNoRecords says a run directory holds nothing to rebuild from.
var errNoRecords = errors.New("no records")

// Assemble is the one summary assembly: it turns what a run directory
// holds (the resolved plan, the experiment's design, the records, the
// events and the telemetry) into its summary. `inferload report` and any
// later merge of shards call it, and a live run ends with the same
// assembly fed with the very records it wrote (recordsFold), so every
// figure and verdict is computed once and a directory always rebuilds to
// the same bytes (TestRebuildIsIdenticalForEveryCommand). A run that was
// killed has no run_end: its window ends at the last completion, and only
// the stages that reached their stage_end are steps.
func Assemble(dir string) (*Rebuilt, error) { return assemble(dir, nil) }

// assemble is Assemble, with the report's digest (when set) built in the
// same one read of the records, which is most of what a rebuild costs.
func assemble(dir string, digest *report.Digest) (*Rebuilt, error) {
	p, d, err := readPlanDesign(dir)
	if err != nil {
		return nil, err
	}
	join, err := readSpans(dir)
	if err != nil {
		return nil, err
	}
	fold := newRecordsFold(p, d, join, digest)
	stats, err := rundir.ReadRecords(rundir.RecordsFile(dir), func(r *record.Result) error {
		fold.Add(r)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("reading records of %s: %w", dir, err)
	}
	return fold.assemble(dir, p, d, stats)
}

// readPlanDesign reads the run's plan and the experiment's design.
func readPlanDesign(dir string) (*plan.Plan, Design, error) {
	p, err := ReadPlan(dir)
	if err != nil {
		return nil, Design{}, err
	}
	d, err := ReadDesign(dir, p)
	return p, d, err
}

// assemble finishes the summary from the records folded so far and the
// directory's other files: the run's window and stages from its events,
// the telemetry, and the verdicts drawn from them; file is what reading
// the records file found (a live run's fold read none), for the loss.
func (f *recordsFold) assemble(dir string, p *plan.Plan, d Design, file rundir.ReadStats) (*Rebuilt, error) {
	info, marks, end, err := readRunInfo(dir, p)
	if err != nil {
		return nil, err
	}
	if f.n == 0 && info.EndUS == 0 {
		return nil, fmt.Errorf("%s: %w (was the run stopped before any request finished?)", dir, errNoRecords)
	}
	s := f.agg.Summary(info)
	if f.join != nil {
		s.Spans = f.join.Summary()
	}
	if len(f.segs) > 1 {
		for i, sa := range f.segs {
			ss := sa.Summary(info)
			s.Segments = append(s.Segments, record.SegmentFigures{Segment: fmt.Sprintf("%d/%d", i, len(f.segs)),
				Requests: ss.Requests, FailureRate: ss.FailureRate})
		}
	}
	if err := assembleSteps(s, p, d, marks, f.accs); err != nil {
		return nil, err
	}
	if d.Soak != nil {
		s.Soak = soakOf(f.soak, s, d.Soak)
	}
	samples, err := ReadTelemetry(dir)
	if err != nil {
		return nil, err
	}
	observe.Summarize(samples, info, s)
	observe.ServedPrefixShare(s)
	if err := analyze.Diagnose(s, analyze.Evidence{Samples: samples, Info: info, Trend: f.agg.LoadTrend(info), Load: runLoad(p, d, f.agg, info), Criteria: d.Criteria}); err != nil {
		return nil, err
	}
	loss := recordsLoss(dir, end, f.n, file)
	if msg := loss.String(); msg != "" {
		// First: every other figure and warning is about the records read.
		s.Warnings = append([]string{msg}, s.Warnings...)
	}
	if err := applyThresholds(s, p); err != nil {
		return nil, err
	}
	return &Rebuilt{Summary: s, Loss: loss, lastDoneUS: f.lastDoneUS}, nil
}

// assembleSteps gives a staged run its steps, one per finished stage, and
// the verdicts its design draws from them (knee, capacity).
func assembleSteps(s *record.Summary, p *plan.Plan, d Design, marks []record.StageMark, accs map[int]*StepAcc) error {
	if !d.staged() {
		return nil
	}
	for _, m := range marks {
		acc := accs[m.Index]
		if acc == nil { // a stage in which no request finished
			acc = NewStepAcc(p, d)
			accs[m.Index] = acc
		}
		step, err := BuildStep(acc, m, p, d)
		if err != nil {
			return fmt.Errorf("stage %d: %w", m.Index, err)
		}
		s.Steps = append(s.Steps, step)
	}
	if d.Knee != nil {
		s.Knee = kneeOf(s.Steps, d.Knee, d.Capacity != nil)
	}
	if d.Capacity != nil {
		s.Capacity = capacityOf(d.Capacity, s.Steps, marks, accs)
	}
	s.Operating = operatingOf(d, s.Knee, s.Capacity)
	return nil
}

// ReadPlan reads the run's resolved plan.yaml as any plan is read
// (plan.Parse), so a rebuild sees the plan the live run ran.
func ReadPlan(dir string) (*plan.Plan, error) {
	path := filepath.Join(dir, rundir.Plan)
	raw, err := inputfile.Read(context.Background(), path, inputfile.Plan)
	if err != nil {
		return nil, fmt.Errorf("%s is not a run directory: %w", dir, err)
	}
	p, err := plan.Parse(path, raw)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", dir, err)
	}
	return p, nil
}

// RunInfo is the run's clock marks as its events.jsonl recorded them
// (readRunInfo), for what reads a run directory's other files on the
// run's clock.
func RunInfo(dir string, p *plan.Plan) (record.RunInfo, error) {
	info, _, _, err := readRunInfo(dir, p)
	return info, err
}

// runEnd is what the run_end event says: whether the run ended, and how
// many records it wrote (0: not counted).
type runEnd struct {
	seen    bool
	records int64
}

// readRunInfo recovers the run's clock marks, its stages and its end from
// events.jsonl; its name and mode come from the plan. A run without a
// run_end was killed: it counts as interrupted.
func readRunInfo(dir string, p *plan.Plan) (record.RunInfo, []record.StageMark, runEnd, error) {
	info := record.RunInfo{Name: p.Name, Mode: p.Load.Mode()}
	var marks []record.StageMark
	var end runEnd
	_, err := rundir.ReadEvents(filepath.Join(dir, rundir.Events), func(e *record.Event) error {
		info.Apply(e)
		if e.Kind == record.EventRunEnd {
			end = runEnd{seen: true, records: e.Records}
		}
		if e.Kind == record.EventStageEnd && e.Stage != nil {
			m := *e.Stage
			m.EndUS = e.TimeUS
			marks = append(marks, m)
		}
		return nil
	})
	if err != nil {
		return info, nil, end, fmt.Errorf("reading events of %s: %w", dir, err)
	}
	if !end.seen {
		info.Interrupted = true
	}
	return info, marks, end, nil
}

// readSpans reads spans.jsonl into a join; nil when the run did not listen
// for spans (no file).
func readSpans(dir string) (*observe.SpanJoin, error) {
	join := observe.NewSpanJoin()
	_, err := rundir.ReadSpans(filepath.Join(dir, rundir.Spans), func(s *record.Span) error {
		join.AddSpan(*s)
		return nil
	})
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading spans of %s: %w", dir, err)
	}
	return join, nil
}

// ReadTelemetry loads a run directory's telemetry.jsonl; a run without
// one (older, or telemetry off) has no samples. Rebuilds and merges read
// the file through it (capacity's calibrate, which may not import
// summary, reads it with rundir.ReadTelemetry directly).
func ReadTelemetry(dir string) ([]observe.Sample, error) {
	return rundir.ReadTelemetry[observe.Sample](filepath.Join(dir, rundir.Telemetry))
}
