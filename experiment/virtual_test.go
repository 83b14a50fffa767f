package experiment

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/inferload/inferload/capacity"
	"github.com/inferload/inferload/internal/enginetest"
	"github.com/inferload/inferload/plan"
	"github.com/inferload/inferload/record"
	"github.com/inferload/inferload/rundir"
	"github.com/inferload/inferload/schedule"
	"github.com/inferload/inferload/summary"
)

// Verdict tests on virtual time. A verdict (the knee, find-capacity's
// answer, the soak's drift, calibrate's fit) is a rule over records; run
// over HTTP in wall-clock time, the records are whatever a busy host let
// the simulator and the client do, and the planted truth moves with the
// host's load. Here the records come from a target on a virtual clock
// (the simulator's batching model, sim.Engine, driven as capacity's fleet
// drives it), are written into a run directory exactly as the runner
// writes one (stage marks, closing events), and are judged by the one
// summary assembly the CLI uses (summary.Rebuild, as `inferload report`),
// under the design the experiment itself writes (SweepOptions.design,
// CapacityOptions.design and search). Nothing in them reads the host's
// clock, so they give the same answer on any host, and a broken rule
// fails them every time. docs/testing.md describes the split.

// virtualTarget serves one stage on virtual time: the stage's records on
// its own clock (sent from 0), warm-up ones marked as such. startUS is
// where the stage starts on the run clock, for a target whose behaviour
// changes over the run (a planted degradation).
type virtualTarget interface {
	serve(st schedule.Stage, warmup, grace time.Duration, startUS int64) ([]record.Result, error)
}

// simTarget is one simulator replica on virtual time, every request
// asking for the same prompt and output lengths (the plan's).
type simTarget struct {
	spec capacity.FleetSpec
}

// newSimTarget is maxSeqs-wide simulator ("tiny", with steps of at least
// step) serving p's fixed input and output lengths: the server smallSim
// starts over HTTP.
func newSimTarget(t *testing.T, p *plan.Plan, maxSeqs int, step time.Duration) simTarget {
	t.Helper()
	prof := enginetest.TinyProfile(t)
	prof.MaxNumSeqs, prof.Cost.StepOverhead = maxSeqs, step
	in, err1 := strconv.Atoi(p.Workload.InputTokens)
	out, err2 := strconv.Atoi(p.Workload.OutputTokens)
	if err1 != nil || err2 != nil {
		t.Fatalf("a virtual target needs fixed lengths, got input %q output %q", p.Workload.InputTokens, p.Workload.OutputTokens)
	}
	req := capacity.FleetRequest{PromptTokens: in, OutputTokens: out}
	return simTarget{spec: capacity.FleetSpec{Profile: prof, ReadyAt: []time.Duration{0}, Seed: 1,
		Request: func(uint64) capacity.FleetRequest { return req }}}
}

// serve runs the stage's closed loop of users (no think time, all
// starting together, as the engine's users do) against the replica.
func (s simTarget) serve(st schedule.Stage, warmup, grace time.Duration, _ int64) ([]record.Result, error) {
	if st.Mode != record.ModeClosed || st.Kind != record.StepConstant {
		return nil, fmt.Errorf("virtual simulator: stage %s: only constant closed-loop stages", st.Describe())
	}
	spec := s.spec
	spec.Load, spec.Duration, spec.Drain = capacity.Load{Users: int(st.Target)}, st.Duration, grace
	var out []record.Result
	_, err := capacity.RunFleet(spec, func(o *capacity.FleetOutcome) { out = append(out, o.Record(false, warmup)) })
	return out, err
}

// virtualRun writes one run directory from a virtual target, stage after
// stage, as the runner writes one from the engine.
type virtualRun struct {
	t      *testing.T
	p      *plan.Plan
	design summary.Design
	target virtualTarget
	dir    string
	files  *runFiles
	// nowUS is the run clock: where the next stage starts (the last
	// one's last reply); measureUS is the last stage's issuing stop.
	nowUS, measureUS int64
	nextID           uint64
	stages           int
	records          int64
}

// virtualEpoch is every virtual run's start (run_start's wall time).
var virtualEpoch = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)

func newVirtualRun(t *testing.T, p *plan.Plan, d summary.Design, target virtualTarget) *virtualRun {
	t.Helper()
	dir, err := rundir.Create(p.Output.Dir, p.Name, virtualEpoch)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := p.Redacted()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, rundir.Plan), raw, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := summary.WriteDesign(dir, d); err != nil {
		t.Fatal(err)
	}
	files, err := openRunFiles(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = files.close() })
	v := &virtualRun{t: t, p: p, design: d, target: target, dir: dir, files: files}
	v.event(record.Event{Kind: record.EventRunStart, Message: virtualEpoch.Format(time.RFC3339Nano)})
	return v
}

func (v *virtualRun) event(e record.Event) {
	v.t.Helper()
	if err := v.files.events.Write(e); err != nil {
		v.t.Fatal(err)
	}
}

// stage runs st as the run's next stage (index 0: the single phase of a
// run or soak, whose records carry no step) and returns its step as the
// runner's finish does: its stage_end marks and what its records folded
// into. It has probeFunc's shape, so a capacity search can drive it.
func (v *virtualRun) stage(_ context.Context, st schedule.Stage) (record.Step, *summary.StepAcc, error) {
	index := 0
	if v.design.Kind != summary.KindRun && v.design.Kind != summary.KindSoak {
		v.stages++
		index = v.stages
	}
	rs, err := v.target.serve(st, v.p.Load.Warmup, v.p.Load.Grace, v.nowUS)
	if err != nil {
		return record.Step{}, nil, err
	}
	acc := summary.NewStepAcc(v.p, v.design)
	startUS, endUS := v.nowUS, v.nowUS
	for i := range rs {
		r := &rs[i]
		shift(r, startUS, v.nextID, index)
		endUS = max(endUS, r.SendUS+r.E2EUS)
		if err := v.files.records.Write(r); err != nil {
			return record.Step{}, nil, err
		}
		acc.Add(r)
	}
	v.nextID += uint64(len(rs))
	v.records += int64(len(rs))
	v.nowUS, v.measureUS = endUS, startUS+st.Duration.Microseconds()
	if index == 0 {
		return record.Step{}, nil, nil
	}
	mark := stageMark(index, st, v.p.Load.Warmup, startUS, v.measureUS)
	v.event(record.Event{TimeUS: endUS, Kind: record.EventStageEnd, Stage: &mark})
	mark.EndUS = endUS
	step, err := summary.BuildStep(acc, mark, v.p, v.design)
	return step, acc, err
}

// finish closes the run as the runner does and rebuilds its summary as
// `inferload report` does.
func (v *virtualRun) finish() *Outcome {
	v.t.Helper()
	for _, e := range closingEvents(v.p, min(v.p.Load.Warmup.Microseconds(), v.nowUS), v.measureUS, v.nowUS, "", v.records) {
		v.event(e)
	}
	if err := v.files.close(); err != nil {
		v.t.Fatal(err)
	}
	rb, err := summary.Rebuild(v.dir)
	if err != nil {
		v.t.Fatal(err)
	}
	return &Outcome{Dir: v.dir, Summary: rb.Summary}
}

// virtualSweep is Sweep on a virtual target: the same stages and design.
func virtualSweep(t *testing.T, p *plan.Plan, o SweepOptions, target virtualTarget) *Outcome {
	t.Helper()
	stages, d, err := o.design(p)
	if err != nil {
		t.Fatal(err)
	}
	v := newVirtualRun(t, p, d, target)
	for _, st := range stages {
		if _, _, err := v.stage(context.Background(), st); err != nil {
			t.Fatal(err)
		}
	}
	return v.finish()
}

// virtualCapacity is FindCapacity on a virtual target: the same design
// and search, each probe a virtual stage.
func virtualCapacity(t *testing.T, p *plan.Plan, o CapacityOptions, target virtualTarget) *Outcome {
	t.Helper()
	o = o.withDefaults()
	if err := o.check(p); err != nil {
		t.Fatal(err)
	}
	d := o.design()
	v := newVirtualRun(t, p, d, target)
	if err := o.search(context.Background(), v.stage, d.Capacity); err != nil {
		t.Fatal(err)
	}
	return v.finish()
}

// virtualSoak is Soak on a virtual target: one phase of the plan's load.
func virtualSoak(t *testing.T, p *plan.Plan, o SoakOptions, target virtualTarget) *Outcome {
	t.Helper()
	v := newVirtualRun(t, p, summary.Design{Kind: summary.KindSoak, Soak: &o}, target)
	st := schedule.Stage{Kind: record.StepConstant, Mode: record.ModeClosed, Duration: p.Load.Duration, Target: float64(p.Load.Concurrency)}
	if _, _, err := v.stage(context.Background(), st); err != nil {
		t.Fatal(err)
	}
	return v.finish()
}
