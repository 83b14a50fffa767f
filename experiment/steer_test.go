package experiment

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/inferload/inferload/record"
	"github.com/inferload/inferload/rundir"
	"github.com/inferload/inferload/sim"
)

// steeredRun runs one user for 3 s and, from outside as the live UI
// would: after 4 results a note and 3 users, after 4 results of the
// second stage a pause and a resume. The run must record three stages
// (1, 3, 3 users) and the note. Counting the second stage's own results
// keeps the pause inside it: counting any 4 more let a slow steering
// goroutine (a busy CI box) change the load and pause within stage 1,
// which then made only two stages.
func steeredRun(ctx context.Context, t *testing.T, url string) (*Outcome, error) {
	p := testPlan(t, fmt.Sprintf(identityHead+"load: {concurrency: 1, duration: 3s}\n", url))
	s := NewSteering()
	var n, inStage2 atomic.Int64
	at4, at8 := make(chan struct{}), make(chan struct{})
	opts := Options{Steering: s, OnResult: func(r *record.Result) {
		if n.Add(1) == 4 {
			close(at4)
		}
		if r.Step == 2 && inStage2.Add(1) == 4 {
			close(at8)
		}
	}}
	errs, ran := make(chan error, 1), make(chan struct{})
	wait := func(c <-chan struct{}, what string) error {
		select {
		case <-c:
			return nil
		case <-ran:
			return errors.New("the run ended before " + what)
		}
	}
	go func() {
		errs <- func() error {
			if err := wait(at4, "4 results"); err != nil {
				return err
			}
			if _, err := s.Note("users 1 → 3"); err != nil {
				return err
			}
			if err := s.SetLoad(3); err != nil {
				return err
			}
			if err := wait(at8, "4 results of stage 2"); err != nil {
				return err
			}
			if err := s.Pause(); err != nil {
				return err
			}
			if !s.State().Paused {
				return errors.New("not paused after Pause")
			}
			return s.Resume()
		}()
	}()
	out, err := Run(ctx, p, opts)
	close(ran)
	if serr := <-errs; serr != nil {
		t.Errorf("steering: %v", serr)
	}
	return out, err
}

// TestSteeredRunRecordsEachLoadAsAStage: every change made while the run
// runs ends a stage and starts the next at the new load, the note is in
// events.jsonl, and the run is over for the Steering afterwards.
func TestSteeredRunRecordsEachLoadAsAStage(t *testing.T) {
	t.Parallel()
	url := tinySim(t, sim.Faults{})
	out, err := steeredRun(context.Background(), t, url)
	if err != nil {
		t.Fatal(err)
	}
	steps := out.Summary.Steps
	var targets []float64
	for _, st := range steps {
		targets = append(targets, st.Target)
	}
	if fmt.Sprint(targets) != "[1 3 3]" {
		t.Fatalf("stage targets %v, want [1 3 3]", targets)
	}
	var notes []string
	if _, err := rundir.ReadEvents(filepath.Join(out.Dir, rundir.Events), func(e *record.Event) error {
		if e.Kind == record.EventNote && !strings.HasPrefix(e.Message, "stage ") {
			notes = append(notes, e.Message)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(notes) != "[users 1 → 3]" {
		t.Errorf("notes %q, want the one note", notes)
	}
}

// TestSteeringRefusesWhatItCannotDo: bad levels, fractional users, runs
// whose load is not steered, and a run that is over are errors.
func TestSteeringRefusesWhatItCannotDo(t *testing.T) {
	t.Parallel()
	s := NewSteering()
	if err := s.SetLoad(2); !errors.Is(err, ErrNotSteerable) {
		t.Errorf("unattached SetLoad: %v, want ErrNotSteerable", err)
	}
	if _, err := s.Note("x"); err == nil {
		t.Error("a note before the run started was accepted")
	}
	s.steered, s.mode, s.level = true, record.ModeClosed, 2
	for _, level := range []float64{0, -1, 2.5, 2e6} {
		if err := s.SetLoad(level); err == nil {
			t.Errorf("SetLoad(%g) accepted", level)
		}
	}
	s.detach()
	if err := s.Pause(); err == nil || !strings.Contains(err.Error(), "over") {
		t.Errorf("Pause after the run: %v, want 'the run is over'", err)
	}
}

// TestSteeringLimit: a level set from the page is bounded by the plan's
// own: at most SteerFactor × its level, and never under SteerFloor, so a
// small plan can still be explored (POST /api/load {"level": 1000000}
// was accepted on a run of 8 users: 29k connections in 0.2 s).
func TestSteeringLimit(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		mode        string
		plan, level float64
		ok          bool
	}{
		// 8 users: up to 80.
		{record.ModeClosed, 8, 80, true},
		{record.ModeClosed, 8, 81, false},
		{record.ModeClosed, 8, 1_000_000, false},
		// 1 user: the floor, 32.
		{record.ModeClosed, 1, 32, true},
		{record.ModeClosed, 1, 33, false},
		// 50 requests/s: up to 500.
		{record.ModeOpen, 50, 500, true},
		{record.ModeOpen, 50, 500.5, false},
	} {
		s := NewSteering()
		s.steer(tt.mode, tt.plan)
		err := s.SetLoad(tt.level)
		if (err == nil) != tt.ok {
			t.Errorf("%s plan %g, level %g: %v, want ok %v", tt.mode, tt.plan, tt.level, err, tt.ok)
		}
		if err != nil && !strings.Contains(err.Error(), "limit") {
			t.Errorf("%s plan %g, level %g: %v: want the limit named", tt.mode, tt.plan, tt.level, err)
		}
		if got, want := s.State().MaxLevel, max(SteerFactor*tt.plan, SteerFloor); got != want {
			t.Errorf("%s plan %g: max level %g, want %g", tt.mode, tt.plan, got, want)
		}
	}
}
