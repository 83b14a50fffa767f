package cli

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/inferload/inferload/experiment"
	"github.com/inferload/inferload/live"
	"github.com/inferload/inferload/observe"
	"github.com/inferload/inferload/plan"
	"github.com/inferload/inferload/record"
)

// uiTokenEnv gives the token of the live UI and of the `ui` launcher;
// without it one is generated and printed in the URL (on loopback too:
// any local user reaches 127.0.0.1).
const uiTokenEnv = "INFERLOAD_UI_TOKEN"

// uiFlags choose the live web UI of a run.
type uiFlags struct {
	listen string
	linger time.Duration
}

func (f *uiFlags) bind(c *cobra.Command) {
	c.Flags().StringVar(&f.listen, "ui", "", "serve the live web UI at http://ADDR during the run, e.g. 127.0.0.1:8089 (its controls need the token in the printed URL, or $"+uiTokenEnv+"; see docs/live.md)")
	c.Flags().DurationVar(&f.linger, "ui-linger", 0, "after the run and its summary, keep the live UI up this long (or until Ctrl-C or the page's stop) to read the final figures")
}

// runControl is the live UI's hold on a run: its stop and abort, and its
// Steering for the load and notes.
type runControl struct {
	p     *plan.Plan
	steer *experiment.Steering
	stop  context.CancelFunc

	mu       sync.Mutex
	abort    chan struct{}
	aborted  bool
	stopping bool
	// endLinger, while the page lingers after the run, is closed by the
	// page's stop or abort: the run is over, so they end the linger.
	endLinger chan struct{}
}

func (c *runControl) Stop() {
	c.mu.Lock()
	c.stopping = true
	if c.endLinger != nil {
		close(c.endLinger)
		c.endLinger = nil
	}
	c.mu.Unlock()
	c.stop()
}

// lingering starts the linger: the returned channel closes on the page's
// next stop or abort.
func (c *runControl) lingering() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.endLinger = make(chan struct{})
	return c.endLinger
}

func (c *runControl) Abort() {
	c.Stop()
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.aborted {
		c.aborted = true
		close(c.abort)
	}
}

func (c *runControl) SetLoad(level float64) error            { return c.steer.SetLoad(level) }
func (c *runControl) Pause() error                           { return c.steer.Pause() }
func (c *runControl) Resume() error                          { return c.steer.Resume() }
func (c *runControl) Note(text string) (record.Event, error) { return c.steer.Note(text) }

// Load is the steered load, or the plan's when the run is not steered.
func (c *runControl) Load() live.LoadState {
	s := c.steer.State()
	c.mu.Lock()
	stopping := c.stopping
	c.mu.Unlock()
	if s.Steerable {
		return live.LoadState{Steerable: true, Mode: s.Mode, Level: s.Level, MaxLevel: s.MaxLevel, Paused: s.Paused, Stopping: stopping}
	}
	return live.LoadState{Mode: c.p.Load.Mode(), Level: c.p.Load.Level(), Stopping: stopping}
}

// level is the load set now, for the monitor's points.
func (c *runControl) level() float64 { return c.Load().Level }

// monitorOptions are the live page's rules from the plan (plan.Plan.Rules,
// which summary.NewAggregate takes too), so the page's tables and goodput
// read as summary.json's. Every live page (a run's, the launcher's, the
// collector's) takes them from here.
func monitorOptions(p *plan.Plan, now func() time.Time) live.MonitorOptions {
	return live.MonitorOptions{Rules: p.Rules(), Now: now}
}

// startUI serves the live UI of the run of p (when --ui is set) and hooks
// it into opts: ctx is the run's, canceled by the page's stop too, and
// opts.Abort closes on the page's abort as well as on a second Ctrl-C.
// finish shows the outcome on the page; closeUI, called once the terminal
// has its summary, lingers when asked and closes the page.
func (f *uiFlags) startUI(ctx context.Context, st *State, p *plan.Plan, opts *experiment.Options) (
	runCtx context.Context, finish func(*experiment.Outcome, error), closeUI func() error, err error) {
	if f.listen == "" {
		return ctx, func(*experiment.Outcome, error) {}, func() error { return nil }, nil
	}
	runCtx, cancel := context.WithCancel(ctx)
	ctl := &runControl{p: p, steer: experiment.NewSteering(), stop: cancel, abort: make(chan struct{})}
	mon := live.NewMonitor(monitorOptions(p, st.clock().Now))
	srv, err := live.ServeUI(f.listen, mon, ctl, live.UIOptions{Token: st.Getenv(uiTokenEnv)})
	if err != nil {
		cancel()
		return nil, nil, nil, usageErrorf("--ui: %w", err)
	}
	fmt.Fprintf(st.Stderr, "live UI at %s\n", uiURL(st, srv))
	hookMonitor(opts, mon, ctl, p)
	over := make(chan struct{})
	opts.Abort = mergeAbort(opts.Abort, ctl.abort, over)
	opts.Steering = ctl.steer
	finish = func(out *experiment.Outcome, runErr error) {
		close(over)
		switch {
		case runErr != nil:
			mon.Finish(live.Final{Error: runErr.Error()})
		case out != nil:
			mon.Finish(live.Final{Dir: out.Dir, Summary: out.Summary})
		}
	}
	closeUI = func() error {
		defer cancel()
		f.lingerFor(ctx, st, ctl.lingering())
		return srv.Close()
	}
	return runCtx, finish, closeUI, nil
}

// lingerFor keeps the page up for --ui-linger after the run, or until
// ctx ends (Ctrl-C) or the page's stop closes ended (nil: a page that
// cannot stop).
func (f *uiFlags) lingerFor(ctx context.Context, st *State, ended <-chan struct{}) {
	if f.linger <= 0 {
		return
	}
	by := "Ctrl-C or the page's stop ends it"
	if ended == nil {
		by = "Ctrl-C ends it"
	}
	fmt.Fprintf(st.Stderr, "live UI stays up for %s (%s)\n", f.linger, by)
	t := time.NewTimer(f.linger)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	case <-ended:
	}
}

// hookMonitor feeds mon from the run, after any live exporter already
// hooked into opts.
func hookMonitor(opts *experiment.Options, mon *live.Monitor, ctl *runControl, p *plan.Plan) {
	onResult, inFlight, started, onSample := opts.OnResult, opts.InFlight, opts.Started, opts.OnSample
	opts.OnSample = func(s observe.Sample) {
		if onSample != nil {
			onSample(s)
		}
		mon.Sample(s)
	}
	opts.OnResult = func(r *record.Result) {
		if onResult != nil {
			onResult(r)
		}
		mon.Observe(r)
	}
	opts.InFlight = func(current func() int) {
		if inFlight != nil {
			inFlight(current)
		}
		mon.Gauges(current, ctl.level)
	}
	opts.Started = func(dir string) {
		mon.Start(dir, p.Load.Duration)
		if started != nil {
			started(dir)
		}
	}
}

// mergeAbort closes its result when a (nil: never) or b closes; its
// goroutine ends then or when over closes, after the run.
func mergeAbort(a <-chan struct{}, b, over chan struct{}) <-chan struct{} {
	out := make(chan struct{})
	go func() {
		select {
		case <-a:
			close(out)
		case <-b:
			close(out)
		case <-over:
		}
	}()
	return out
}

// uiURL is the address to print: with the token when it was generated
// (the user needs it), without when it came from $INFERLOAD_UI_TOKEN (a
// secret the user has, kept out of logs).
func uiURL(st *State, srv *live.UIServer) string {
	u := srv.URL()
	if st.Getenv(uiTokenEnv) != "" {
		u = srv.BaseURL() + " (token from $" + uiTokenEnv + ")"
	}
	if note := srv.ListenNote(); note != "" {
		u += " (" + note + ")"
	}
	return u
}
