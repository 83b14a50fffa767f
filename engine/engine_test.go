package engine

import (
	"context"
	"errors"
	"math"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/inferload/inferload/protocol"
	"github.com/inferload/inferload/record"
	"github.com/inferload/inferload/schedule"
	"github.com/inferload/inferload/workload"
)

// serviceClient answers every request after a fixed service time with one
// token at its end. It stands in for a server where the test is about
// scheduling, not the wire (the wire is tested in protocol and in
// experiment's end-to-end tests). It is in memory, so it runs on
// testing/synctest's simulated time.
type serviceClient struct {
	service  time.Duration
	calls    atomic.Int64 // every Do, even one given a canceled ctx
	inFlight atomic.Int64
	peak     atomic.Int64
	// block, when non-nil, holds every request until closed or canceled.
	block chan struct{}
}

func (c *serviceClient) Do(ctx context.Context, req *protocol.Request, t *protocol.Trace) {
	c.calls.Add(1)
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

// simulated runs f in a testing/synctest bubble: time.Now and timers are
// simulated, and f's end waits for every goroutine the engine started (one
// left blocked fails the test).
func simulated(t *testing.T, f func(t *testing.T)) {
	t.Helper()
	t.Parallel()
	synctest.Test(t, f)
}

// advance moves a bubble's simulated clock on by d, then waits until every
// other goroutine in it is blocked: what was due by then has happened.
func advance(d time.Duration) {
	time.Sleep(d)
	synctest.Wait()
}

// collect runs cfg to the end and returns its results. Inside a bubble, set
// cfg.Clock to TimerClock so the engine waits on simulated time.
func collect(t *testing.T, cfg Config, ctx context.Context) []*record.Result {
	t.Helper()
	rs, _ := collectEngine(t, cfg, ctx)
	return rs
}

// collectEngine is collect that also returns the finished engine.
func collectEngine(t *testing.T, cfg Config, ctx context.Context) ([]*record.Result, *Engine) {
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
	return rs, e
}

// started runs cfg in the background; the results come on the returned
// channel and Run's end closes done.
func started(t *testing.T, cfg Config) (e *Engine, out chan *record.Result, done chan struct{}) {
	t.Helper()
	e, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	out = make(chan *record.Result, 1024)
	done = make(chan struct{})
	go func() {
		defer close(done)
		if err := e.Run(context.Background(), out); err != nil {
			t.Error(err)
		}
	}()
	return e, out, done
}

func TestClosedLoopSendsExactlyTheRequestBudget(t *testing.T) {
	simulated(t, func(t *testing.T) {
		c := &serviceClient{service: 2 * time.Millisecond}
		rs := collect(t, Config{Client: c, Source: fixedSource{}, Render: render, Clock: TimerClock{},
			Shape: ClosedLoop{Users: 3}, Requests: 20, Grace: time.Second}, context.Background())
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
			// The only token comes at the end of the 2 ms service.
			if r.TTFTUS != 2000 || r.E2EUS != 2000 {
				t.Errorf("ttft %dµs e2e %dµs: want both 2000µs", r.TTFTUS, r.E2EUS)
			}
		}
		if p := c.peak.Load(); p != 3 {
			t.Errorf("peak in-flight %d, want the 3 users", p)
		}
	})
}

// An open loop against a server slower than the arrival rate, behind an
// in-flight cap of 1: each request waits for the previous one, so queue
// delay grows and latency measured from the intended time includes it.
func TestOpenLoopCountsLatencyFromIntendedTime(t *testing.T) {
	simulated(t, func(t *testing.T) {
		const service = 20 * time.Millisecond
		c := &serviceClient{service: service}
		arr := &offsets{at: []time.Duration{0, time.Millisecond, 2 * time.Millisecond, 3 * time.Millisecond, 4 * time.Millisecond}}
		rs := collect(t, Config{Client: c, Source: fixedSource{}, Render: render, Clock: TimerClock{},
			Shape: OpenLoop{Arrivals: arr, MaxInFlight: 1, LateAfter: 10 * time.Millisecond}, Requests: 5, Grace: 5 * time.Second},
			context.Background())
		if len(rs) != 5 {
			t.Fatalf("got %d results, want 5", len(rs))
		}
		for _, r := range rs {
			// Request k was due at k ms but could start only after k
			// services of 20 ms: (20k − k) ms of queue delay, inside its
			// latency.
			k := int64(r.ID)
			wantQueue := 19_000 * k
			if r.IntendedUS != 1000*k || !r.OpenLoop {
				t.Errorf("request %d: intended %dµs open=%v, want %dµs open", k, r.IntendedUS, r.OpenLoop, 1000*k)
			}
			if r.QueueDelayUS != wantQueue || r.E2EUS != wantQueue+service.Microseconds() {
				t.Errorf("request %d: queue delay %dµs e2e %dµs, want %dµs and %dµs",
					k, r.QueueDelayUS, r.E2EUS, wantQueue, wantQueue+service.Microseconds())
			}
			if wantLate := wantQueue > 10_000; r.Late != wantLate {
				t.Errorf("request %d: late=%v, want %v", k, r.Late, wantLate)
			}
		}
		if p := c.peak.Load(); p != 1 {
			t.Errorf("peak in-flight %d, want the cap of 1", p)
		}
	})
}

func TestWarmupFlagsEarlyRequests(t *testing.T) {
	simulated(t, func(t *testing.T) {
		c := &serviceClient{service: time.Millisecond}
		arr := &offsets{at: []time.Duration{0, 10 * time.Millisecond, 20 * time.Millisecond, 30 * time.Millisecond}}
		rs := collect(t, Config{Client: c, Source: fixedSource{}, Render: render, Clock: TimerClock{},
			Shape: OpenLoop{Arrivals: arr}, Requests: 4, Warmup: 15 * time.Millisecond, Grace: time.Second}, context.Background())
		if len(rs) != 4 {
			t.Fatalf("got %d results, want 4", len(rs))
		}
		for _, r := range rs {
			want := r.IntendedUS < 15000
			if r.Warmup != want {
				t.Errorf("request due at %dµs: warmup=%v, want %v", r.IntendedUS, r.Warmup, want)
			}
		}
	})
}

// TestOpenLoopLastsItsDuration: an open loop issues until Duration or the
// request count, whatever its arrivals do, and StoppedIssuingUS says when.
// Before, a schedule with nothing more due before Duration ended issuing
// at its last arrival: 0.3 req/s for 10 s measured a window of a few ms.
func TestOpenLoopLastsItsDuration(t *testing.T) {
	poisson := func() Arrivals {
		a, err := schedule.NewArrivals(schedule.Poisson, 0.3, 1, 1)
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	trace := func(at ...time.Duration) func() Arrivals {
		return func() Arrivals { return &offsets{at: append(at, never)} }
	}
	tests := []struct {
		name        string
		arrivals    func() Arrivals
		duration    time.Duration
		requests    int
		wantResults int
		wantStopUS  int64         // StoppedIssuingUS
		wantEnd     time.Duration // when Run returned
	}{
		// The reported case: Poisson 0.3/s with seed 1 has its second
		// arrival after 10 s; the window is still the full 10 s.
		{"sparse rate", poisson, 10 * time.Second, 0, 1, 10_000_000, 10 * time.Second},
		// The next arrival lies beyond Duration: issuing ends at Duration.
		{"arrival past the end", func() Arrivals {
			return &offsets{at: []time.Duration{0, 5 * time.Millisecond, 10 * time.Millisecond, time.Hour}}
		}, 50 * time.Millisecond, 0, 3, 50_000, 50 * time.Millisecond},
		// A trace that runs out before Duration: the phase still lasts
		// Duration.
		{"trace shorter than duration", trace(0, 10*time.Millisecond), 50 * time.Millisecond, 0, 2, 50_000, 50 * time.Millisecond},
		// Without Duration a trace that runs out ends issuing at its last
		// request (10 ms), its reply (1 ms) drained.
		{"trace without duration", trace(0, 10*time.Millisecond), 0, 100, 2, 10_000, 11 * time.Millisecond},
		// The request count, reached before Duration, ends issuing when
		// the last request is issued.
		{"count before duration", trace(0, 1*time.Millisecond, 2*time.Millisecond, 3*time.Millisecond),
			time.Hour, 3, 3, 2_000, 3 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			simulated(t, func(t *testing.T) {
				start := time.Now()
				rs, e := collectEngine(t, Config{Client: &serviceClient{service: time.Millisecond}, Source: fixedSource{},
					Render: render, Clock: TimerClock{}, Shape: OpenLoop{Arrivals: tt.arrivals()}, Duration: tt.duration,
					Requests: tt.requests, Grace: time.Second}, context.Background())
				if len(rs) != tt.wantResults {
					t.Errorf("got %d results, want %d", len(rs), tt.wantResults)
				}
				if got := e.StoppedIssuingUS(); got != tt.wantStopUS {
					t.Errorf("stopped issuing at %dµs, want %dµs", got, tt.wantStopUS)
				}
				if got := time.Since(start); got != tt.wantEnd {
					t.Errorf("Run returned after %v, want %v", got, tt.wantEnd)
				}
			})
		})
	}
}

// TestClosedLoopStopsAtDuration: a closed loop stops issuing at exactly
// Duration; the requests in flight then finish within the grace.
func TestClosedLoopStopsAtDuration(t *testing.T) {
	simulated(t, func(t *testing.T) {
		rs, e := collectEngine(t, Config{Client: &serviceClient{service: 3 * time.Millisecond}, Source: fixedSource{},
			Render: render, Clock: TimerClock{}, Shape: ClosedLoop{Users: 2}, Duration: 10 * time.Millisecond}, context.Background())
		// Each user sends at 0, 3, 6 and 9 ms; the last pair ends at 12 ms.
		if len(rs) != 8 || e.StoppedIssuingUS() != 10_000 {
			t.Errorf("%d results, stopped at %dµs; want 8 and 10000µs", len(rs), e.StoppedIssuingUS())
		}
		for _, r := range rs {
			if !r.OK() {
				t.Errorf("request %d: %s, want a success", r.ID, r.Error)
			}
		}
	})
}

// A graceful stop lets in-flight requests finish within the grace period;
// past it they are canceled and still recorded.
func TestStopGivesGraceThenCancels(t *testing.T) {
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
			simulated(t, func(t *testing.T) {
				const grace = 200 * time.Millisecond
				c := &serviceClient{block: make(chan struct{})}
				ctx, stop := context.WithCancel(context.Background())
				e, err := New(Config{Client: c, Source: fixedSource{}, Render: render, Clock: TimerClock{},
					Shape: ClosedLoop{Users: 2}, Duration: time.Hour, Grace: grace})
				if err != nil {
					t.Fatal(err)
				}
				out := make(chan *record.Result, 4)
				go func() { _ = e.Run(ctx, out) }()
				synctest.Wait()
				stop()
				synctest.Wait()
				if e.StoppedIssuingUS() == 0 || c.inFlight.Load() != 2 {
					t.Fatalf("stopped at %dµs with %d in flight, want stopped with 2", e.StoppedIssuingUS(), c.inFlight.Load())
				}
				stoppedAt := time.Now()
				if tt.release {
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
				if waited := time.Since(stoppedAt); !tt.release && waited != grace {
					t.Errorf("canceled %v after the stop, want the grace of %v", waited, grace)
				}
			})
		})
	}
}

// TestStopIssuingAndAbort: StopIssuing admits nothing more and lets what is
// in flight finish; Abort admits nothing more either and cancels what is
// in flight, so Run returns at once. Before, Abort only canceled: closed-
// loop users went on sending (canceled) requests until the budget ran out,
// and an open loop went on issuing on schedule.
func TestStopIssuingAndAbort(t *testing.T) {
	closed := func(c *Config) { c.Shape = ClosedLoop{Users: 3} }
	open := func(c *Config) {
		c.Shape = OpenLoop{Arrivals: &offsets{at: []time.Duration{0, time.Millisecond, 2 * time.Millisecond, time.Minute}}}
	}
	tests := []struct {
		name     string
		loop     func(*Config)
		abort    bool
		wantKind record.ErrorKind // of every result
	}{
		// Closed loop, graceful: the 3 users' requests complete.
		{"closed stop issuing", closed, false, record.ErrNone},
		// Closed loop, abort: the 3 are canceled; no user sends again.
		{"closed abort", closed, true, record.ErrCanceled},
		// Open loop, graceful: the 3 arrivals so far complete; the one due
		// at 1 min is never sent.
		{"open stop issuing", open, false, record.ErrNone},
		// Open loop, abort: the 3 are canceled, nothing more is issued.
		{"open abort", open, true, record.ErrCanceled},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			simulated(t, func(t *testing.T) {
				c := &serviceClient{block: make(chan struct{})}
				cfg := Config{Client: c, Source: fixedSource{}, Render: render, Clock: TimerClock{},
					Duration: time.Hour, Requests: 1000, Grace: time.Minute}
				tt.loop(&cfg)
				e, out, done := started(t, cfg)
				advance(5 * time.Millisecond) // the 3 requests are sent by then
				if c.inFlight.Load() != 3 {
					t.Fatalf("%d in flight, want 3", c.inFlight.Load())
				}
				stoppedAt := time.Now()
				if tt.abort {
					e.Abort()
				} else {
					e.StopIssuing()
				}
				if e.StoppedIssuingUS() != 5000 || e.Issued() != 3 {
					t.Errorf("stopped at %dµs after %d issued, want 5000µs and 3", e.StoppedIssuingUS(), e.Issued())
				}
				if !tt.abort {
					advance(time.Second) // within the grace
					close(c.block)
				}
				var rs []*record.Result
				for r := range out {
					rs = append(rs, r)
				}
				<-done
				if calls := c.calls.Load(); calls != 3 || len(rs) != 3 {
					t.Errorf("%d requests sent, %d results; want 3 and 3", calls, len(rs))
				}
				for _, r := range rs {
					if r.Error != tt.wantKind {
						t.Errorf("request %d: error %q, want %q", r.ID, r.Error, tt.wantKind)
					}
				}
				wantEnd := time.Duration(0) // Abort: Run returns at once
				if !tt.abort {
					wantEnd = time.Second // when the requests were released
				}
				if got := time.Since(stoppedAt); got != wantEnd {
					t.Errorf("Run returned %v after the stop, want %v", got, wantEnd)
				}
			})
		})
	}
}

// TestStopIssuingBeforeRun: a phase stopped before it ran issues nothing.
func TestStopIssuingBeforeRun(t *testing.T) {
	simulated(t, func(t *testing.T) {
		c := &serviceClient{service: time.Millisecond}
		e, err := New(Config{Client: c, Source: fixedSource{}, Render: render, Clock: TimerClock{},
			Shape: ClosedLoop{Users: 2}, Duration: time.Hour})
		if err != nil {
			t.Fatal(err)
		}
		e.StopIssuing()
		out := make(chan *record.Result, 4)
		if err := e.Run(context.Background(), out); err != nil {
			t.Fatal(err)
		}
		if n := len(out); n != 0 || c.calls.Load() != 0 || e.StoppedIssuingUS() != 1 {
			t.Errorf("%d results, %d sent, stopped at %dµs; want 0, 0 and 1µs", n, c.calls.Load(), e.StoppedIssuingUS())
		}
	})
}

func TestRenderFailureIsARecordNotACrash(t *testing.T) {
	t.Parallel()
	bad := func(workload.Spec) (*protocol.Request, error) { return nil, errors.New("boom") }
	rs := collect(t, Config{Client: &serviceClient{}, Source: fixedSource{}, Render: bad,
		Shape: ClosedLoop{Users: 1}, Requests: 2, Grace: time.Second}, context.Background())
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
		// No shape at all. (Both loops at once, which the old Config's
		// fields allowed, cannot be written: a Config holds one Shape.)
		{"no shape", func(c *Config) {}},
		// A closed loop of no users.
		{"no users", func(c *Config) { c.Shape = ClosedLoop{} }},
		// An open loop with no schedule.
		{"no arrivals", func(c *Config) { c.Shape = OpenLoop{} }},
		// A negative in-flight cap.
		{"negative cap", func(c *Config) { c.Shape = OpenLoop{Arrivals: &offsets{at: []time.Duration{0}}, MaxInFlight: -1} }},
		{"no end", func(c *Config) { c.Shape = ClosedLoop{Users: 1}; c.Requests = 0 }},
		{"no client", func(c *Config) { c.Shape = ClosedLoop{Users: 1}; c.Client = nil }},
		// Ends must name every user: a user without one could not hand over.
		{"ends short", func(c *Config) { c.Shape = ClosedLoop{Users: 2, Ends: make([]chan struct{}, 1)} }},
		// A negative or NaN spawn rate.
		{"negative spawn rate", func(c *Config) { c.Shape = ClosedLoop{Users: 1, SpawnRate: -1} }},
		{"NaN spawn rate", func(c *Config) { c.Shape = ClosedLoop{Users: 1, SpawnRate: math.NaN()} }},
	}
	for _, tt := range tests {
		c := base
		tt.mod(&c)
		if _, err := New(c); err == nil {
			t.Errorf("%s: want an error", tt.name)
		}
	}
}

// TestGraceEndsARequestCountRun: --requests 2 against a server that never
// sends its headers ends by the grace rule, as a duration run does: once
// both requests are issued they get Grace (200 ms) and are canceled,
// instead of holding the run for the client's 60 s timeout.
func TestGraceEndsARequestCountRun(t *testing.T) {
	t.Parallel()
	over := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		select { // no headers, ever, while the client stays
		case <-r.Context().Done():
		case <-over:
		}
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(over) })
	client, err := protocol.NewOpenAI(protocol.OpenAIOptions{BaseURL: srv.URL + "/v1", TotalTimeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(client.Close)
	start := time.Now()
	recs := collect(t, Config{Client: client, Source: fixedSource{}, Render: renderPlain, Shape: ClosedLoop{Users: 2},
		Requests: 2, Grace: 200 * time.Millisecond, Seed: 1}, context.Background())
	took := time.Since(start)
	t.Logf("took %v", took)
	if took > 20*time.Second {
		t.Fatalf("the run took %v: the 200ms grace was not applied after the last request was issued", took)
	}
	if len(recs) != 2 {
		t.Fatalf("%d records, want 2", len(recs))
	}
	for _, r := range recs {
		if r.Error != record.ErrCanceled {
			t.Errorf("record error %q, want canceled (cut off after the grace)", r.Error)
		}
	}
}
