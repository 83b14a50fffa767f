package experiment

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/inferload/inferload/engine"
	"github.com/inferload/inferload/plan"
	"github.com/inferload/inferload/record"
	"github.com/inferload/inferload/schedule"
	"github.com/inferload/inferload/summary"
)

// Steering changes a run while it runs: the live UI's and its API's
// hold on the runner. Notes work on every run; the load (the users of a
// closed loop, the rate of an open loop) and pause/resume only on a run
// steered from its start (Options.Steering on a plan with a duration
// and a constant load), which is recorded as stages: every change ends
// the running stage (engine.StopIssuing, its in-flight requests finish)
// and starts the next at the new load at once, taking over its users
// (runner.handOver), so `inferload report` rebuilds
// the same per-stage figures from the stage_end events. A pause is the
// gap between two stages. Safe for concurrent use.
type Steering struct {
	mu       sync.Mutex
	r        *runner // the running run; nil before its start and after its end
	steered  bool    // the run's driver follows the load set here
	mode     string
	level    float64
	max      float64 // the highest level SetLoad takes (steerLimit)
	paused   bool
	gen      int            // bumped by every change; a stage started at an older one ends
	eng      *engine.Engine // the running stage's engine
	wake     chan struct{}  // closed when a pause ends
	endedRun bool
}

// NewSteering returns a Steering to pass in Options.Steering.
func NewSteering() *Steering { return &Steering{wake: make(chan struct{})} }

// SteerState is what a Steering holds now.
type SteerState struct {
	// Steerable is whether SetLoad and Pause apply to this run.
	Steerable bool    `json:"steerable"`
	Mode      string  `json:"mode,omitempty"`  // record.ModeClosed or record.ModeOpen
	Level     float64 `json:"level,omitempty"` // users or requests/s
	// MaxLevel is the highest level SetLoad takes on this run.
	MaxLevel float64 `json:"max_level,omitempty"`
	Paused   bool    `json:"paused"`
	Running  bool    `json:"running"`
}

// State is the run's load as last set and whether it is paused.
func (s *Steering) State() SteerState {
	s.mu.Lock()
	defer s.mu.Unlock()
	return SteerState{Steerable: s.steered, Mode: s.mode, Level: s.level, MaxLevel: s.max, Paused: s.paused, Running: s.r != nil}
}

// ErrNotSteerable is SetLoad's or Pause's answer on a run whose load is
// not steered: a sweep, a staged plan, a request count, a trace.
var ErrNotSteerable = errors.New("this run's load cannot be changed: only a run with a duration and a constant users or rate load can")

// maxSteerLevel bounds a level set from the page, as load.stages does.
const maxSteerLevel = 1_000_000

// A level set while the run runs (the live page, POST /api/load) is
// bounded by the plan's own: at most SteerFactor × the plan's users or
// requests/s, and never less than SteerFloor of them, so a small plan
// can still be explored. Beyond, start a run with a larger plan: a page
// (or anyone who reaches it) cannot turn an 8-user run into 29,000
// connections.
const (
	SteerFactor = 10
	SteerFloor  = 32
)

// steer makes s steer a run that starts at level in mode.
func (s *Steering) steer(mode string, level float64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.steered, s.mode, s.level = true, mode, level
	s.max = max(SteerFactor*level, SteerFloor)
}

// SetLoad sets the users (closed loop) or requests/s (open loop) from
// now on: the running stage ends and the next starts at level.
func (s *Steering) SetLoad(level float64) error {
	if !(level > 0) || level > maxSteerLevel {
		return fmt.Errorf("load %g: must be above 0 and at most %d", level, maxSteerLevel)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.checkSteerable(); err != nil {
		return err
	}
	if level > s.max {
		unit := "users"
		if s.mode == record.ModeOpen {
			unit = "requests/s"
		}
		return fmt.Errorf("%g %s is over this run's limit of %g %s (%d× the plan's level, at least %d): start a run with a larger plan to go further",
			level, unit, s.max, unit, SteerFactor, SteerFloor)
	}
	if s.mode == record.ModeClosed && level != float64(int(level)) {
		return fmt.Errorf("users %g: a closed loop runs a whole number of users", level)
	}
	if level == s.level {
		return nil
	}
	s.level = level
	s.changeLocked()
	return nil
}

// Pause stops issuing until Resume: the running stage ends (its
// requests in flight finish) and no new one starts.
func (s *Steering) Pause() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.checkSteerable(); err != nil {
		return err
	}
	if !s.paused {
		s.paused = true
		s.changeLocked()
	}
	return nil
}

// Resume ends a pause: the next stage starts at the current level.
func (s *Steering) Resume() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.checkSteerable(); err != nil {
		return err
	}
	if s.paused {
		s.paused = false
		close(s.wake)
		s.wake = make(chan struct{})
	}
	return nil
}

func (s *Steering) checkSteerable() error {
	switch {
	case s.endedRun:
		return errors.New("the run is over")
	case !s.steered:
		return ErrNotSteerable
	}
	return nil
}

// changeLocked ends the running stage so the driver applies the change.
func (s *Steering) changeLocked() {
	s.gen++
	if s.eng != nil {
		s.eng.StopIssuing()
	}
}

// Note adds a timestamped note to the run's events.jsonl, on the run
// clock: it shows on every time chart of report.html.
func (s *Steering) Note(text string) (record.Event, error) {
	text = strings.TrimSpace(text)
	if text == "" {
		return record.Event{}, errors.New("note: the text is empty")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.r == nil {
		return record.Event{}, errors.New("note: no run is going on")
	}
	e := record.Event{TimeUS: s.r.opts.clock().Now().Sub(s.r.start).Microseconds(), Kind: record.EventNote, Message: text}
	if err := s.r.files.events.Write(e); err != nil {
		return record.Event{}, fmt.Errorf("note: %w", err)
	}
	return e, s.r.files.events.Flush()
}

// attach is called once the run clock has started.
func (s *Steering) attach(r *runner) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.r = r
}

// detach is called before the run's files close.
func (s *Steering) detach() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.r, s.eng, s.endedRun = nil, nil, true
}

// steerable reports whether a plan's load can follow a Steering: one
// phase for a duration at a constant users or rate load.
func steerable(p *plan.Plan) bool {
	l := p.Load
	return len(l.Stages) == 0 && l.Duration > 0 && l.Requests == 0 && l.Level() > 0
}

// runSteered runs a steerable plan as stages that follow s: stage 1 at
// the plan's load; each change starts the next, until the plan's
// duration of issuing (pauses not counted) has passed or ctx is done.
func runSteered(ctx context.Context, p *plan.Plan, opts Options, s *Steering) (*Outcome, error) {
	mode, level := p.Load.Mode(), p.Load.Level()
	s.steer(mode, level)
	first := schedule.Stage{Kind: record.StepConstant, Mode: mode, Duration: p.Load.Duration, Target: level}
	return execute(ctx, p, opts, summary.Design{Kind: summary.KindStages}, func(r *runner) (driver, error) {
		if _, err := r.stageConfig(1, first); err != nil {
			return nil, err
		}
		printDatasetProfiles(opts.Progress, p, r.inputs)
		return func(ctx context.Context, r *runner) error { return s.drive(ctx, r, p.Load.Duration) }, nil
	})
}

// drive runs stages until total issuing time is spent. Each change
// starts the next stage the moment the running one stops issuing, taking
// over its users (runner.launchStaged): the load changes without a hole.
// A pause lets the running stage finish; the stage after it starts anew.
func (s *Steering) drive(ctx context.Context, r *runner, total time.Duration) error {
	left := total
	var prev *running
	for index := 1; ctx.Err() == nil && left > 0; {
		st, gen, wake, paused := s.next(left)
		if paused {
			if err := r.finishStaged(prev); err != nil {
				return err
			}
			prev = nil
			select {
			case <-wake:
			case <-ctx.Done():
			}
			continue
		}
		if index > 1 && left <= r.p.Load.Warmup {
			break // too short a stage to hold its own warm-up: the run ends here
		}
		hook := func(eng *engine.Engine) { s.started(eng, gen) }
		cur, err := r.stageAfter(ctx, index, st, prev, hook)
		if err != nil {
			return err
		}
		prev = cur
		s.mu.Lock()
		s.eng = nil
		s.mu.Unlock()
		left -= time.Duration(cur.eng.StoppedIssuingUS()) * time.Microsecond
		index++
	}
	return r.finishStaged(prev)
}

// next is the stage to run now (left long, at the current level), the
// change it starts at, and whether the run is paused.
func (s *Steering) next(left time.Duration) (schedule.Stage, int, <-chan struct{}, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := schedule.Stage{Kind: record.StepConstant, Mode: s.mode, Duration: left, Target: s.level}
	return st, s.gen, s.wake, s.paused
}

// started registers a stage's engine before it runs; a change made since
// the stage was chosen stops it at once.
func (s *Steering) started(eng *engine.Engine, gen int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.eng = eng
	if gen != s.gen {
		eng.StopIssuing()
	}
}
