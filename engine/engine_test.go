package engine

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/inferload/inferload/protocol"
	"github.com/inferload/inferload/record"
	"github.com/inferload/inferload/workload"
)

// serviceClient answers every request after a fixed service time with one
// token at the halfway point. It stands in for a server where the test is
// about scheduling, not the wire (the wire is tested in protocol and in
// experiment's end-to-end tests).
type serviceClient struct {
	service  time.Duration
	inFlight atomic.Int64
	peak     atomic.Int64
	// block, when non-nil, holds every request until closed or canceled.
	block chan struct{}
}

func (c *serviceClient) Do(ctx context.Context, req *protocol.Request, t *protocol.Trace) {
	n := c.inFlight.Add(1)
	defer c.inFlight.Add(-1)
	for p := c.peak.Load(); n > p && !c.peak.CompareAndSwap(p, n); p = c.peak.Load() {
	}
	t.Start = time.Now()
	t.Sent = t.Start
	t.Status = 200
	wait := c.block
	if wait == nil {
		ch := make(chan struct{})
		time.AfterFunc(c.service, func() { close(ch) })
		wait = ch
	}
	select {
	case <-wait:
	case <-ctx.Done():
		t.End = time.Now()
		t.Err, t.ErrMsg = record.ErrCanceled, "canceled"
		return
	}
	t.FirstToken = time.Now()
	t.EventsUS = append(t.EventsUS, t.FirstToken.Sub(t.Sent).Microseconds())
	t.ContentEvents = 1
	t.End = time.Now()
}

type fixedSource struct{}

func (fixedSource) Spec(i uint64) workload.Spec {
	return workload.Spec{Index: i, Class: "default", Prompt: "hi", InputTokens: 4, MaxTokens: 1}
}

func render(spec workload.Spec) (*protocol.Request, error) {
	return &protocol.Request{API: protocol.APIChat, Body: []byte(`{}`), Stream: true, MaxTokens: spec.MaxTokens}, nil
}

// offsets replays fixed arrival offsets, then stays at the last one.
type offsets struct {
	mu sync.Mutex
	at []time.Duration
}

func (o *offsets) Next() time.Duration {
	o.mu.Lock()
	defer o.mu.Unlock()
	d := o.at[0]
	if len(o.at) > 1 {
		o.at = o.at[1:]
	}
	return d
}

func collect(t *testing.T, cfg Config, ctx context.Context) []*record.Result {
	t.Helper()
	e, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	out := make(chan *record.Result, 16)
	errc := make(chan error, 1)
	go func() { errc <- e.Run(ctx, out) }()
	var rs []*record.Result
	for r := range out {
		rs = append(rs, r)
	}
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	return rs
}

func TestClosedLoopSendsExactlyTheRequestBudget(t *testing.T) {
	t.Parallel()
	c := &serviceClient{service: 2 * time.Millisecond}
	rs := collect(t, Config{Client: c, Source: fixedSource{}, Render: render,
		Concurrency: 3, Requests: 20, Grace: time.Second}, context.Background())
	if len(rs) != 20 {
		t.Fatalf("got %d results, want 20", len(rs))
	}
	seen := map[uint64]bool{}
	for _, r := range rs {
		if seen[r.ID] || r.ID >= 20 {
			t.Errorf("duplicate or out-of-range id %d", r.ID)
		}
		seen[r.ID] = true
		if !r.OK() || r.OpenLoop || r.QueueDelayUS != 0 {
			t.Errorf("result %+v: want a closed-loop success", r)
		}
		if r.TTFTUS < 1000 || r.E2EUS < r.TTFTUS {
			t.Errorf("ttft %dµs e2e %dµs: want ttft >= 1ms and e2e >= ttft", r.TTFTUS, r.E2EUS)
		}
	}
	if p := c.peak.Load(); p > 3 {
		t.Errorf("peak in-flight %d exceeds 3 users", p)
	}
}

// An open loop against a server slower than the arrival rate, behind an
// in-flight cap of 1: each request waits for the previous one, so queue
// delay grows and latency measured from the intended time includes it.
func TestOpenLoopCountsLatencyFromIntendedTime(t *testing.T) {
	t.Parallel()
	const service = 20 * time.Millisecond
	c := &serviceClient{service: service}
	arr := &offsets{at: []time.Duration{0, time.Millisecond, 2 * time.Millisecond, 3 * time.Millisecond, 4 * time.Millisecond}}
	rs := collect(t, Config{Client: c, Source: fixedSource{}, Render: render,
		Arrivals: arr, MaxInFlight: 1, Requests: 5, LateAfter: 10 * time.Millisecond, Grace: 5 * time.Second},
		context.Background())
	if len(rs) != 5 {
		t.Fatalf("got %d results, want 5", len(rs))
	}
	byID := map[uint64]*record.Result{}
	for _, r := range rs {
		byID[r.ID] = r
	}
	last := byID[4]
	// Request 4 was due at 4ms but could only start after four 20ms
	// services: at least 76ms of queue delay, all inside its latency.
	if min := (4*service - 4*time.Millisecond).Microseconds(); last.QueueDelayUS < min {
		t.Errorf("queue delay %dµs, want >= %dµs", last.QueueDelayUS, min)
	}
	if last.E2EUS < last.QueueDelayUS+service.Microseconds() {
		t.Errorf("e2e %dµs does not include queue delay %dµs + service", last.E2EUS, last.QueueDelayUS)
	}
	if !last.Late || byID[0].Late {
		t.Errorf("late flags: first %v last %v, want false/true", byID[0].Late, last.Late)
	}
	if last.IntendedUS != 4000 || !last.OpenLoop {
		t.Errorf("intended %dµs open=%v, want 4000µs open", last.IntendedUS, last.OpenLoop)
	}
	if p := c.peak.Load(); p != 1 {
		t.Errorf("peak in-flight %d, want the cap of 1", p)
	}
}

func TestWarmupFlagsEarlyRequests(t *testing.T) {
	t.Parallel()
	c := &serviceClient{service: time.Millisecond}
	arr := &offsets{at: []time.Duration{0, 10 * time.Millisecond, 20 * time.Millisecond, 30 * time.Millisecond}}
	rs := collect(t, Config{Client: c, Source: fixedSource{}, Render: render,
		Arrivals: arr, Requests: 4, Warmup: 15 * time.Millisecond, Grace: time.Second}, context.Background())
	for _, r := range rs {
		want := r.IntendedUS < 15000
		if r.Warmup != want {
			t.Errorf("request due at %dµs: warmup=%v, want %v", r.IntendedUS, r.Warmup, want)
		}
	}
}

func TestDurationStopsOpenLoopAtScheduleEnd(t *testing.T) {
	t.Parallel()
	c := &serviceClient{service: time.Millisecond}
	arr := &offsets{at: []time.Duration{0, 5 * time.Millisecond, 10 * time.Millisecond, time.Hour}}
	rs := collect(t, Config{Client: c, Source: fixedSource{}, Render: render,
		Arrivals: arr, Duration: 50 * time.Millisecond, Grace: time.Second}, context.Background())
	if len(rs) != 3 {
		t.Fatalf("got %d results, want the 3 due before the end", len(rs))
	}
}

// A graceful stop lets in-flight requests finish within the grace period;
// past it they are canceled and still recorded.
func TestStopGivesGraceThenCancels(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		release bool // release the server before grace ends
		want    record.ErrorKind
	}{
		{"finish within grace", true, record.ErrNone},
		{"canceled after grace", false, record.ErrCanceled},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := &serviceClient{block: make(chan struct{})}
			ctx, stop := context.WithCancel(context.Background())
			e, err := New(Config{Client: c, Source: fixedSource{}, Render: render,
				Concurrency: 2, Duration: time.Hour, Grace: 200 * time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			out := make(chan *record.Result, 4)
			go func() { _ = e.Run(ctx, out) }()
			waitFor(t, func() bool { return c.inFlight.Load() == 2 })
			stop()
			if tt.release {
				waitFor(t, func() bool { return e.StoppedIssuingUS() > 0 })
				close(c.block)
			}
			var rs []*record.Result
			for r := range out {
				rs = append(rs, r)
			}
			if len(rs) != 2 {
				t.Fatalf("got %d results, want the 2 in flight", len(rs))
			}
			for _, r := range rs {
				if r.Error != tt.want {
					t.Errorf("error %q, want %q", r.Error, tt.want)
				}
			}
		})
	}
}

func TestRenderFailureIsARecordNotACrash(t *testing.T) {
	t.Parallel()
	bad := func(workload.Spec) (*protocol.Request, error) { return nil, errors.New("boom") }
	rs := collect(t, Config{Client: &serviceClient{}, Source: fixedSource{}, Render: bad,
		Concurrency: 1, Requests: 2, Grace: time.Second}, context.Background())
	if len(rs) != 2 || rs[0].Error != record.ErrOther || rs[0].ErrorMsg == "" {
		t.Fatalf("results %+v: want 2 failed records with a message", rs)
	}
}

func TestConfigValidation(t *testing.T) {
	t.Parallel()
	base := Config{Client: &serviceClient{}, Source: fixedSource{}, Render: render, Requests: 1}
	tests := []struct {
		name string
		mod  func(*Config)
	}{
		{"neither loop", func(c *Config) {}},
		{"both loops", func(c *Config) { c.Concurrency = 1; c.Arrivals = &offsets{at: []time.Duration{0}} }},
		{"no end", func(c *Config) { c.Concurrency = 1; c.Requests = 0 }},
		{"no client", func(c *Config) { c.Concurrency = 1; c.Client = nil }},
	}
	for _, tt := range tests {
		c := base
		tt.mod(&c)
		if _, err := New(c); err == nil {
			t.Errorf("%s: want an error", tt.name)
		}
	}
}

// waitFor polls cond until it holds or a generous deadline passes.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not reached before the deadline")
		}
		time.Sleep(time.Millisecond)
	}
}
