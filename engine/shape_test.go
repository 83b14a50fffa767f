package engine_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/inferload/inferload/engine"
	"github.com/inferload/inferload/protocol"
	"github.com/inferload/inferload/record"
	"github.com/inferload/inferload/workload"
)

// stepUsers is a shape written outside the engine, in this one file, as
// a new shape would be: a closed loop that starts with one user and adds
// one every Step, up to Max (k6's ramping VUs, in steps). It touches no
// engine or experiment code: it runs through engine.ClosedLoop.
type stepUsers struct {
	Step time.Duration
	Max  int
}

func (s stepUsers) Validate() error {
	if s.Step <= 0 || s.Max < 1 {
		return errors.New("stepUsers: want a positive step and at least one user")
	}
	return nil
}

func (s stepUsers) Run(ph *engine.Phase) {
	active := func(elapsed time.Duration) int { return min(int(elapsed/s.Step)+1, s.Max) }
	engine.ClosedLoop{Users: s.Max, Active: active}.Run(ph)
}

// tenMillis answers every request 10 ms after it is sent.
type tenMillis struct{}

func (tenMillis) Do(ctx context.Context, _ *protocol.Request, t *protocol.Trace) {
	t.Start = time.Now()
	t.Sent, t.Status = t.Start, 200
	select {
	case <-time.After(10 * time.Millisecond): // simulated time: the service, not a wait for another goroutine
	case <-ctx.Done():
		t.End, t.Err = time.Now(), record.ErrCanceled
		return
	}
	t.FirstToken = time.Now()
	t.EventsUS = append(t.EventsUS, t.FirstToken.Sub(t.Sent).Microseconds())
	t.ContentEvents, t.End = 1, time.Now()
}

type oneSpec struct{}

func (oneSpec) Spec(i uint64) workload.Spec {
	return workload.Spec{Index: i, Class: "default", Prompt: "hi", InputTokens: 4, MaxTokens: 1}
}

func renderAny(workload.Spec) (*protocol.Request, error) {
	return &protocol.Request{API: protocol.APIChat, Body: []byte(`{}`), Stream: true, MaxTokens: 1}, nil
}

// TestNewShapeIsOneFile: a shape defined in a test file (stepUsers) is
// validated by New and run by the engine. With a 10 ms service and a
// step of 100 ms, each step sends 10 requests per active user: 10, 20,
// 30 in the three steps of the 300 ms phase. A bad one fails New.
func TestNewShapeIsOneFile(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		eng, err := engine.New(engine.Config{Client: tenMillis{}, Source: oneSpec{}, Render: renderAny, Clock: engine.TimerClock{},
			Shape: stepUsers{Step: 100 * time.Millisecond, Max: 3}, Duration: 300 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		out := make(chan *record.Result, 16)
		go func() { _ = eng.Run(t.Context(), out) }()
		perStep := map[int64]int{}
		for r := range out {
			if r.OK() && r.SendUS < 300_000 {
				perStep[r.SendUS/100_000]++
			}
		}
		for step, want := range []int{10, 20, 30} {
			if got := perStep[int64(step)]; got != want {
				t.Errorf("step %d (%d users): %d requests sent, want %d", step+1, step+1, got, want)
			}
		}
	})
	if _, err := engine.New(engine.Config{Client: tenMillis{}, Source: oneSpec{}, Render: renderAny,
		Shape: stepUsers{}, Requests: 1}); err == nil {
		t.Error("a shape whose Validate fails: New returned no error")
	}
}
