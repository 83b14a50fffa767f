package experiment

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/inferload/inferload/analyze"
	"github.com/inferload/inferload/observe"
	"github.com/inferload/inferload/plan"
	"github.com/inferload/inferload/record"
	"github.com/inferload/inferload/rundir"
)

// errNoRecords says a run directory holds nothing to rebuild from.
var errNoRecords = errors.New("no records")

// Assemble is the one summary assembly: it turns what a run directory
// holds (the resolved plan, the experiment's design, the records, the
// events and the telemetry) into its summary. The live run, `inferload
// report` and any later merge of shards call it, so every figure and
// verdict is computed once, from the records, and a directory always
// rebuilds to the same bytes. A run that was killed has no run_end: its
// window ends at the last completion, and only the stages that reached
// their stage_end are steps.
func Assemble(dir string) (*Rebuilt, error) { return assemble(dir, nil) }

// assemble is Assemble, handing each record as read (before the span join)
// to also, when set: the report's digest shares the one read of the
// records, which is most of what a rebuild costs.
func assemble(dir string, also func(*record.Result)) (*Rebuilt, error) {
	p, err := readPlan(dir)
	if err != nil {
		return nil, err
	}
	d, err := ReadDesign(dir, p)
	if err != nil {
		return nil, err
	}
	info, marks, err := readRunInfo(dir, p)
	if err != nil {
		return nil, err
	}
	agg, accs := newAggregate(p), map[int]*stepAcc{}
	segs := make([]*record.Aggregate, max(d.Segments, 0))
	for i := range segs {
		segs[i] = record.NewAggregate()
	}
	join, err := readSpans(dir)
	if err != nil {
		return nil, err
	}
	n := 0
	stats, err := rundir.ReadRecords(rundir.RecordsFile(dir), func(r *record.Result) error {
		n++
		if also != nil {
			also(r)
		}
		if join != nil {
			join.Apply(r)
		}
		agg.Add(r)
		if len(segs) > 1 {
			segs[record.SegmentOf(r.ID, len(segs))].Add(r)
		}
		if r.Step > 0 && d.staged() {
			acc := accs[r.Step]
			if acc == nil {
				acc = newStepAcc(p, d)
				accs[r.Step] = acc
			}
			acc.add(r)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("reading records of %s: %w", dir, err)
	}
	if n == 0 && info.EndUS == 0 {
		return nil, fmt.Errorf("%s: %w (was the run stopped before any request finished?)", dir, errNoRecords)
	}
	s := agg.Summary(info)
	if join != nil {
		s.Spans = join.Summary()
	}
	if len(segs) > 1 {
		for i, sa := range segs {
			ss := sa.Summary(info)
			s.Segments = append(s.Segments, record.SegmentFigures{Segment: fmt.Sprintf("%d/%d", i, len(segs)),
				Requests: ss.Requests, FailureRate: ss.FailureRate})
		}
	}
	if err := assembleSteps(s, p, d, marks, accs); err != nil {
		return nil, err
	}
	if d.Soak != nil {
		if s.Soak, err = soakOf(dir, p, s, d.Soak); err != nil {
			return nil, err
		}
	}
	samples, err := readTelemetry(dir)
	if err != nil {
		return nil, err
	}
	observe.Summarize(samples, info, s)
	if err := analyze.Diagnose(s, analyze.Evidence{Samples: samples, Info: info, Trend: agg.LoadTrend(info), Load: runLoad(p, d, agg, info), Criteria: d.Criteria}); err != nil {
		return nil, err
	}
	if err := applyThresholds(s, p.Thresholds); err != nil {
		return nil, err
	}
	return &Rebuilt{Summary: s, TruncatedRecords: stats.Truncated}, nil
}

// assembleSteps gives a staged run its steps, one per finished stage, and
// the verdicts its design draws from them (knee, capacity).
func assembleSteps(s *record.Summary, p *plan.Plan, d Design, marks []record.StageMark, accs map[int]*stepAcc) error {
	if !d.staged() {
		return nil
	}
	for _, m := range marks {
		acc := accs[m.Index]
		if acc == nil { // a stage in which no request finished
			acc = newStepAcc(p, d)
			accs[m.Index] = acc
		}
		step, err := buildStep(acc, m, p, d)
		if err != nil {
			return fmt.Errorf("stage %d: %w", m.Index, err)
		}
		s.Steps = append(s.Steps, step)
	}
	if d.Knee != nil {
		s.Knee = kneeOf(s.Steps, d.Knee)
	}
	if d.Capacity != nil {
		s.Capacity = capacityOf(d.Capacity, s.Steps, marks, accs)
	}
	return nil
}

// readPlan reads the run's resolved plan.yaml as any plan is read
// (plan.Parse), so a rebuild sees the plan the live run ran.
func readPlan(dir string) (*plan.Plan, error) {
	path := filepath.Join(dir, rundir.Plan)
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%s is not a run directory: %w", dir, err)
	}
	p, err := plan.Parse(path, raw)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", dir, err)
	}
	return p, nil
}

// readRunInfo recovers the run's clock marks and its stages from
// events.jsonl; its name and mode come from the plan.
func readRunInfo(dir string, p *plan.Plan) (record.RunInfo, []record.StageMark, error) {
	info := record.RunInfo{Name: p.Name, Mode: p.Load.Mode()}
	var marks []record.StageMark
	sawEnd := false
	_, err := rundir.ReadEvents(filepath.Join(dir, rundir.Events), func(e *record.Event) error {
		info.Apply(e)
		sawEnd = sawEnd || e.Kind == record.EventRunEnd
		if e.Kind == record.EventStageEnd && e.Stage != nil {
			m := *e.Stage
			m.EndUS = e.TimeUS
			marks = append(marks, m)
		}
		return nil
	})
	if err != nil {
		return info, nil, fmt.Errorf("reading events of %s: %w", dir, err)
	}
	if !sawEnd {
		info.Interrupted = true
	}
	return info, marks, nil
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
