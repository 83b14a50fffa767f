package cli

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"time"

	"github.com/inferload/inferload/distributed"
	"github.com/inferload/inferload/experiment"
	"github.com/inferload/inferload/live"
	"github.com/inferload/inferload/observe"
	"github.com/inferload/inferload/plan"
	"github.com/inferload/inferload/record"
	"github.com/inferload/inferload/report"
	"github.com/inferload/inferload/schedule"
	"github.com/inferload/inferload/summary"
)

// collectView is the collector's live view of the whole run, fed the
// segments' lines as they arrive (distributed.Feed): one aggregate over every
// segment's records for the progress line (the figures a single run's
// line shows), one per segment for the segment table, and the live
// page's monitor when --ui is set. Like a run's progress line it is a
// view; the summary is assembled from the merged run directory.
type collectView struct {
	col *distributed.Collector
	now func() time.Time
	mon *live.Monitor // nil without --ui

	mu     sync.Mutex
	all    *record.Aggregate
	segs   []*record.Aggregate
	cpu    []float64  // each segment's latest client_cpu_pct, -1 before one
	plan   *plan.Plan // the first segment's to arrive
	phases []string   // each segment's phase at the last tick

	// heldMu guards the page's wait for the plan (collect_live_plan.go):
	// taken before mu and the monitor's own lock, never inside them.
	heldMu sync.Mutex
	// held are records that came before any segment's plan, in order.
	held []*record.Result
	// ruled: the monitor has its rules, from the plan or without one.
	ruled bool
}

func newCollectView(n int, now func() time.Time) *collectView {
	v := &collectView{now: now, all: record.NewAggregate(), cpu: make([]float64, n), phases: make([]string, n)}
	for i := range n {
		v.segs = append(v.segs, record.NewAggregate())
		v.cpu[i] = -1
	}
	return v
}

// feed is what the collector calls with each line.
func (v *collectView) feed() *distributed.Feed {
	return &distributed.Feed{Record: v.record, Event: v.event, Sample: v.sample}
}

func (v *collectView) record(seg int, r *record.Result) {
	v.mu.Lock()
	v.all.Add(r)
	v.segs[seg].Add(r)
	v.mu.Unlock()
	if v.mon != nil {
		v.observe(r)
	}
}

// event marks a segment's own annotations (notes, stage ends, its run's
// end or interruption, a saturated client) on the page, naming it.
func (v *collectView) event(seg int, e *record.Event) {
	if v.mon == nil {
		return
	}
	msg := "segment " + v.segmentName(seg)
	if e.Message != "" {
		msg += ": " + e.Message
	}
	v.mon.Mark(time.Duration(e.TimeUS)*time.Microsecond, string(e.Kind), msg)
}

// sample keeps each segment's client CPU for the segment table, and
// draws the server and GPU samples of segment 0 only, as the merge keeps
// them (every segment scrapes the same server).
func (v *collectView) sample(seg int, s observe.Sample) {
	if s.Source == "client" {
		if cpu, ok := s.Values[observe.ClientCPUPct]; ok && !s.Gap {
			v.mu.Lock()
			v.cpu[seg] = cpu
			v.mu.Unlock()
		}
		return
	}
	if seg == 0 && v.mon != nil {
		v.mon.Sample(s)
	}
}

func (v *collectView) segmentName(i int) string {
	return schedule.Segment{Index: i, Count: len(v.segs)}.String()
}

// runPlan is the run's plan once a segment has sent it (nil before).
// Every segment's plan.yaml is the one plan, load.segment aside, whose
// load and rules are the whole run's; so the first to arrive serves.
func (v *collectView) runPlan() *plan.Plan {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.plan != nil {
		return v.plan
	}
	for _, dir := range v.col.SegmentDirs() {
		if p, err := summary.ReadPlan(dir); err == nil {
			v.plan = p
			break
		}
	}
	return v.plan
}

// tick starts the monitor's clock at the common start once there is one
// and returns the merged progress line's snapshot.
func (v *collectView) tick() report.Snapshot {
	at := v.col.StartAt()
	p := v.runPlan()
	var total, warmup time.Duration
	var target int
	if p != nil {
		total, warmup, target = p.Load.Duration, p.Load.Warmup, p.Load.Requests
	}
	if v.mon != nil && !at.IsZero() {
		v.mon.StartAt(at, filepath.Dir(v.col.SegmentDir(0)), total)
	}
	if v.mon != nil {
		v.release(false)
	}
	var elapsed time.Duration
	if !at.IsZero() {
		elapsed = max(v.now().Sub(at), 0)
	}
	v.mu.Lock()
	run := v.all.Running()
	reqs, toks := v.all.Rate(elapsed.Microseconds(), experiment.RateSpan.Microseconds())
	v.mu.Unlock()
	return report.Snapshot{Elapsed: elapsed, Total: total, Target: target,
		Done: int(run.Succeeded + run.Failed + run.Warmup), InFlight: v.inFlight(),
		ReqPerS: reqs, OutTokPerS: toks, TTFTP50: run.TTFTP50, TTFTP99: run.TTFTP99,
		Errors: int(run.Failed + run.WarmupFailed), Warmup: elapsed < warmup}
}

// inFlight is the sum of what the segments still running last reported.
func (v *collectView) inFlight() int {
	n := 0
	for _, s := range v.col.Status() {
		if !s.Done && s.InFlight > 0 {
			n += s.InFlight
		}
	}
	return n
}

// segments is the page's segment table.
func (v *collectView) segments() []live.SegmentProgress {
	now, at := v.now(), v.col.StartAt()
	var nowUS int64
	if !at.IsZero() {
		nowUS = max(now.Sub(at), 0).Microseconds()
	}
	status := v.col.Status()
	out := make([]live.SegmentProgress, len(status))
	v.mu.Lock()
	defer v.mu.Unlock()
	for i, s := range status {
		run := v.segs[i].Running()
		reqs, _ := v.segs[i].Rate(nowUS, experiment.RateSpan.Microseconds())
		g := live.SegmentProgress{Segment: v.segmentName(i), State: s.Phase(now, at),
			Completed: run.Succeeded + run.Failed + run.Warmup, Failed: run.Failed + run.WarmupFailed, Late: run.Late,
			ReqPerS: reqs, InFlight: s.InFlight, LastSeenS: -1, ClientCPUPct: v.cpu[i]}
		if !s.LastSeen.IsZero() {
			g.LastSeenS = now.Sub(s.LastSeen).Seconds()
		}
		out[i] = g
	}
	return out
}

// changes are the segments whose phase changed since the last call, as
// lines for the terminal ("segment 2/3 silent").
func (v *collectView) changes() []string {
	now, at := v.now(), v.col.StartAt()
	var out []string
	for i, s := range v.col.Status() {
		ph := s.Phase(now, at)
		v.mu.Lock()
		changed := ph != v.phases[i]
		v.phases[i] = ph
		v.mu.Unlock()
		if changed && ph != distributed.PhaseWaiting {
			out = append(out, "segment "+v.segmentName(i)+" "+ph)
		}
	}
	return out
}

// errCollectorFixed is why the collector's page cannot steer the run:
// the segments run their plan on their own machines, and the collector
// has no way to reach them (they call it; it never calls them).
var errCollectorFixed = errors.New("a distributed run is not steered from its collector: each segment runs the plan on its own machine (stop one with Ctrl-C or kubectl delete job; add notes with inferload note on a segment's run directory)")

// collectControl is the collector page's Control: it shows the plan's
// load and refuses every change with errCollectorFixed.
type collectControl struct{ v *collectView }

func (collectControl) Stop()                             {}
func (collectControl) Abort()                            {}
func (collectControl) SetLoad(float64) error             { return errCollectorFixed }
func (collectControl) Pause() error                      { return errCollectorFixed }
func (collectControl) Resume() error                     { return errCollectorFixed }
func (collectControl) Note(string) (record.Event, error) { return record.Event{}, errCollectorFixed }

// Load is the whole run's planned load (every segment's together).
func (c collectControl) Load() live.LoadState {
	s := live.LoadState{Fixed: errCollectorFixed.Error()}
	if p := c.v.runPlan(); p != nil {
		s.Mode, s.Level = p.Load.Mode(), p.Load.Level()
	}
	return s
}

// level is the planned load, for the monitor's points.
func (c collectControl) level() float64 { return c.Load().Level }

// serveUI serves the live page over the view when --ui is set. The
// returned close shows the merged run (or the error) on the page,
// lingers when asked and stops serving.
func (v *collectView) serveUI(st *State, f *uiFlags) (func(context.Context, *distributed.Merged, error) error, error) {
	if f.listen == "" {
		return func(context.Context, *distributed.Merged, error) error { return nil }, nil
	}
	ctl := collectControl{v: v}
	v.mon = live.NewMonitor(live.MonitorOptions{Now: v.now})
	v.mon.Gauges(v.inFlight, ctl.level)
	srv, err := live.ServeUI(f.listen, v.mon, ctl, live.UIOptions{Token: st.Getenv(uiTokenEnv), Segments: v.segments})
	if err != nil {
		return nil, usageErrorf("--ui: %w", err)
	}
	fmt.Fprintf(st.Stderr, "live UI at %s\n", uiURL(st, srv))
	return func(ctx context.Context, m *distributed.Merged, err error) error {
		v.release(true) // the run is over: whatever was held is shown
		switch {
		case err != nil:
			v.mon.Finish(live.Final{Error: err.Error()})
		case m != nil:
			v.mon.Finish(live.Final{Dir: m.Dir, Summary: m.Summary})
		}
		f.lingerFor(ctx, st, nil) // the collector's page cannot stop the run
		return srv.Close()
	}, nil
}
