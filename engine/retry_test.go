package engine

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/inferload/inferload/internal/enginetest"
	"github.com/inferload/inferload/protocol"
	"github.com/inferload/inferload/record"
	"github.com/inferload/inferload/sim"
	"github.com/inferload/inferload/workload"
)

// okBody is a minimal non-streamed chat completion.
const okBody = `{"choices":[{"message":{"role":"assistant","content":"hi"},"finish_reason":"stop"}],` +
	`"usage":{"prompt_tokens":4,"completion_tokens":1}}`

// scripted is a real HTTP server whose n-th hit (0-based) gets reply(n); it
// notes when each hit arrived.
type scripted struct {
	mu   sync.Mutex
	hits []time.Time
}

func (s *scripted) start(t *testing.T, reply func(n int, w http.ResponseWriter)) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		s.mu.Lock()
		n := len(s.hits)
		s.hits = append(s.hits, time.Now())
		s.mu.Unlock()
		reply(n, w)
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/v1"
}

func (s *scripted) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.hits)
}

func replyStatus(w http.ResponseWriter, code int, retryAfter string) {
	if retryAfter != "" {
		w.Header().Set("Retry-After", retryAfter)
	}
	w.WriteHeader(code)
	fmt.Fprint(w, `{"error":{"message":"later"}}`)
}

func replyOK(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprint(w, okBody)
}

// renderPlain asks for a short non-streamed chat reply.
func renderPlain(workload.Spec) (*protocol.Request, error) {
	body := `{"messages":[{"role":"user","content":"hi"}],"max_tokens":2}`
	return &protocol.Request{API: protocol.APIChat, Body: []byte(body), MaxTokens: 2}, nil
}

// runRetries runs n requests one at a time against url with policy p.
func runRetries(t *testing.T, url string, n int, p RetryPolicy) []*record.Result {
	t.Helper()
	return collect(t, Config{Client: openAIClient(t, url), Source: fixedSource{}, Render: renderPlain,
		Shape: ClosedLoop{Users: 1}, Requests: n, Retry: p, Seed: 1}, context.Background())
}

// TestRetryAfterHonoured: a real server answering every other hit with 429
// and Retry-After: 1 sees each retry no sooner than a second after the
// refusal (how much later is up to the machine: TestRetryAfterOnTime pins
// it on simulated time), and every record keeps both attempts, counts its
// latency from the first, and succeeded after a retry.
func TestRetryAfterHonoured(t *testing.T) {
	t.Parallel()
	var s scripted
	url := s.start(t, func(n int, w http.ResponseWriter) {
		if n%2 == 0 {
			replyStatus(w, http.StatusTooManyRequests, "1")
			return
		}
		replyOK(w)
	})
	recs := runRetries(t, url, 2, RetryPolicy{MaxAttempts: 3})
	if len(recs) != 2 || s.count() != 4 {
		t.Fatalf("%d records and %d hits, want 2 and 4", len(recs), s.count())
	}
	for k := 0; k < 4; k += 2 {
		if gap := s.hits[k+1].Sub(s.hits[k]); gap < time.Second {
			t.Errorf("retry came %v after the 429, want at least the 1s Retry-After", gap)
		}
	}
	for _, r := range recs {
		if !r.OK() || len(r.Attempts) != 1 || r.RetryStop != "" {
			t.Fatalf("record %+v: want a success after one retried attempt", r)
		}
		a := r.Attempts[0]
		if a.Status != 429 || a.Error != record.ErrHTTP429 || a.RetryAfterUS != 1e6 || a.WaitUS != 1e6 {
			t.Errorf("attempt %+v: want a 429 with a 1 s Retry-After honoured", a)
		}
		if r.E2EUS < 1e6 || r.OriginUS() != a.SendUS || r.SendUS-a.EndUS < 1e6 {
			t.Errorf("E2E %d µs from origin %d (first send %d): the retry's wait must count", r.E2EUS, r.OriginUS(), a.SendUS)
		}
	}
}

// refusingClient refuses every even-numbered attempt with a 429 and a
// Retry-After, after a 1 ms service, and answers the others at once; it
// notes when each attempt arrived. In memory, for simulated time.
type refusingClient struct {
	retryAfter time.Duration
	mu         sync.Mutex
	hits       []time.Time
}

func (c *refusingClient) Do(_ context.Context, _ *protocol.Request, t *protocol.Trace) {
	c.mu.Lock()
	n := len(c.hits)
	c.hits = append(c.hits, time.Now())
	c.mu.Unlock()
	*t = protocol.Trace{EventsUS: t.EventsUS[:0], Start: time.Now(), Sent: time.Now(), Status: 200}
	if n%2 == 0 {
		time.Sleep(time.Millisecond) // the refusal's service time, simulated
		t.Status, t.Err, t.ErrMsg, t.RetryAfter = 429, record.ErrHTTP429, "later", c.retryAfter
	}
	t.End = time.Now()
}

// TestRetryAfterOnTime: on simulated time, a retry goes out exactly the
// Retry-After after the refusal ended, and the record's latency counts
// from the first attempt: 1 ms refused + 1 s waited.
func TestRetryAfterOnTime(t *testing.T) {
	simulated(t, func(t *testing.T) {
		c := &refusingClient{retryAfter: time.Second}
		recs := collect(t, Config{Client: c, Source: fixedSource{}, Render: renderPlain, Clock: TimerClock{},
			Shape: ClosedLoop{Users: 1}, Requests: 2, Retry: RetryPolicy{MaxAttempts: 3}, Seed: 1}, t.Context())
		if len(recs) != 2 || len(c.hits) != 4 {
			t.Fatalf("%d records and %d attempts, want 2 and 4", len(recs), len(c.hits))
		}
		for k := 0; k < 4; k += 2 {
			if gap := c.hits[k+1].Sub(c.hits[k]); gap != time.Second+time.Millisecond {
				t.Errorf("retry came %v after the refused attempt began, want 1.001s", gap)
			}
		}
		for _, r := range recs {
			if !r.OK() || len(r.Attempts) != 1 || r.E2EUS != 1_001_000 || r.Attempts[0].WaitUS != 1e6 {
				t.Errorf("record %+v: want a success after one retry, E2E 1001000µs, wait 1e6µs", r)
			}
		}
	})
}

// TestRetryOutcomes covers what is retried, how often, and why it stops.
func TestRetryOutcomes(t *testing.T) {
	t.Parallel()
	fast := RetryPolicy{MaxAttempts: 4, InitialBackoff: 20 * time.Millisecond, MaxBackoff: 50 * time.Millisecond}
	tests := []struct {
		name      string
		reply     func(n int, w http.ResponseWriter)
		policy    RetryPolicy
		requests  int
		wantHits  int
		wantStop  string // of every record
		wantFinal record.ErrorKind
	}{
		// 503 without a hint: backoff until max_attempts, every attempt kept.
		{"503 until max attempts", func(_ int, w http.ResponseWriter) { replyStatus(w, 503, "") },
			fast, 1, 4, record.RetryStopAttempts, record.ErrHTTP5xx},
		// A 400 is the caller's fault: never retried.
		{"400 not retried", func(_ int, w http.ResponseWriter) { replyStatus(w, 400, "1") },
			fast, 2, 2, "", record.ErrHTTP4xx},
		// A 500 is not one of the retryable statuses.
		{"500 not retried", func(_ int, w http.ResponseWriter) { replyStatus(w, 500, "") },
			fast, 1, 1, "", record.ErrHTTP5xx},
		// Retry-After beyond the accepted maximum ends retries at once.
		{"retry-after too long", func(_ int, w http.ResponseWriter) { replyStatus(w, 429, "120") },
			fast, 1, 1, record.RetryStopRetryAfter, record.ErrHTTP429},
		// Retries off: one attempt, no stop reason.
		{"retries off", func(_ int, w http.ResponseWriter) { replyStatus(w, 429, "") },
			RetryPolicy{}, 2, 2, "", record.ErrHTTP429},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var s scripted
			recs := runRetries(t, s.start(t, tt.reply), tt.requests, tt.policy)
			if s.count() != tt.wantHits || len(recs) != tt.requests {
				t.Fatalf("%d hits, %d records; want %d, %d", s.count(), len(recs), tt.wantHits, tt.requests)
			}
			for _, r := range recs {
				if r.RetryStop != tt.wantStop || r.Error != tt.wantFinal || 1+len(r.Attempts) != tt.wantHits/tt.requests {
					t.Errorf("record: stop %q error %q attempts %d; want %q %q %d",
						r.RetryStop, r.Error, 1+len(r.Attempts), tt.wantStop, tt.wantFinal, tt.wantHits/tt.requests)
				}
				checkBackoff(t, r, tt.policy.withDefaults())
			}
		})
	}
}

// checkBackoff: each wait lies under its exponential cap and the next
// attempt went out no sooner than the wait.
func checkBackoff(t *testing.T, r *record.Result, p RetryPolicy) {
	t.Helper()
	capUS := p.InitialBackoff.Microseconds()
	for k, a := range r.Attempts {
		if a.WaitUS < 0 || a.WaitUS > min(capUS, p.MaxBackoff.Microseconds()) {
			t.Errorf("attempt %d waited %d µs, want 0..%d", k, a.WaitUS, capUS)
		}
		next := r.SendUS
		if k+1 < len(r.Attempts) {
			next = r.Attempts[k+1].SendUS
		}
		if next-a.EndUS < a.WaitUS {
			t.Errorf("attempt %d: next send %d µs after its end, before the %d µs wait", k, next-a.EndUS, a.WaitUS)
		}
		capUS *= 2
	}
}

// TestRetryBudgetExhausted: with a budget of a handful of retries per
// window, a server failing every request gets no more than that many
// retries however many attempts the policy allows, and the records say
// the budget stopped them.
func TestRetryBudgetExhausted(t *testing.T) {
	t.Parallel()
	var s scripted
	url := s.start(t, func(_ int, w http.ResponseWriter) { replyStatus(w, 503, "") })
	p := RetryPolicy{MaxAttempts: 5, InitialBackoff: time.Millisecond, BudgetRatio: 1e-9,
		BudgetMinRetries: 3, BudgetWindow: time.Hour}
	recs := runRetries(t, url, 6, p)
	retries, budgetStops := 0, 0
	for _, r := range recs {
		retries += len(r.Attempts)
		if r.RetryStop == record.RetryStopBudget {
			budgetStops++
		}
	}
	if retries != 3 || s.count() != 6+3 || budgetStops != 6 {
		t.Errorf("%d retries, %d hits, %d budget stops; want 3, 9, 6", retries, s.count(), budgetStops)
	}
}

// TestRetryBudgetWindow: retries beyond the minimum follow the ratio of
// first attempts, and the window forgets old attempts.
func TestRetryBudgetWindow(t *testing.T) {
	t.Parallel()
	b := newRetryBudget(&RetryPolicy{BudgetRatio: 0.5, BudgetMinRetries: 1, BudgetWindow: 10 * time.Second})
	for range 10 {
		b.note(0, false)
	}
	allowed := 0
	for range 20 {
		if b.note(1000, true) {
			allowed++
		}
	}
	if allowed != 5 {
		t.Errorf("%d retries allowed after 10 first attempts at ratio 0.5, want 5", allowed)
	}
	// Eleven seconds later the window holds nothing: only the minimum.
	if !b.note(11e6, true) || b.note(11e6, true) {
		t.Error("after the window moved on, want exactly the minimum of 1 retry")
	}
}

// TestRetryAmplificationOnSim: against the simulator failing 30% of
// requests with 503, retries turn most failures into late successes and
// the summary shows the attempted load exceeding the offered load.
func TestRetryAmplificationOnSim(t *testing.T) {
	t.Parallel()
	faults, err := sim.ParseFaults("status503=0.3")
	if err != nil {
		t.Fatal(err)
	}
	_, url := enginetest.StartSim(t, sim.Config{Profile: enginetest.TinyProfile(t), Faults: faults, Seed: 3})
	recs := runRetries(t, url, 200, RetryPolicy{MaxAttempts: 4, InitialBackoff: time.Millisecond,
		MaxBackoff: 5 * time.Millisecond, BudgetRatio: 1})
	agg := record.NewAggregate()
	for _, r := range recs {
		agg.Add(r)
	}
	rt := agg.Summary(record.RunInfo{Mode: record.ModeClosed}).Retries
	if rt == nil {
		t.Fatalf("summary has no retries block; first record %+v", recs[0])
	}
	// 30% of attempts fail: about 1/0.7 ≈ 1.43 attempts per request.
	if rt.Requests != 200 || rt.Amplification < 1.2 || rt.Amplification > 1.7 {
		t.Errorf("requests %d amplification %.2f, want 200 and 1.2..1.7", rt.Requests, rt.Amplification)
	}
	if rt.SucceededAfterRetry < 30 || rt.RetriedErrors[string(record.ErrHTTP5xx)] != rt.Attempts-rt.Requests {
		t.Errorf("succeeded after retry %d, retried errors %v: want ≥30, all http_5xx", rt.SucceededAfterRetry, rt.RetriedErrors)
	}
}

// TestNoRetryAfterIssuingStopped: a request backing off when issuing stops
// (here: the end of a 200 ms duration, during a 5 s Retry-After) makes no
// new attempt in the grace period: the server sees one hit, and the record
// keeps the real error (http_5xx, not canceled) with the reason retries
// stopped.
func TestNoRetryAfterIssuingStopped(t *testing.T) {
	t.Parallel()
	var s scripted
	url := s.start(t, func(_ int, w http.ResponseWriter) { replyStatus(w, 503, "5") })
	client, err := protocol.NewOpenAI(protocol.OpenAIOptions{BaseURL: url})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(client.Close)
	rs := collect(t, Config{Client: client, Source: fixedSource{}, Render: renderPlain, Shape: ClosedLoop{Users: 1},
		Duration: 200 * time.Millisecond, Grace: 30 * time.Second, Retry: RetryPolicy{MaxAttempts: 5}, Seed: 1},
		context.Background())
	if len(rs) != 1 || s.count() != 1 {
		t.Fatalf("%d records, %d hits: want one request, one attempt", len(rs), s.count())
	}
	r := rs[0]
	if r.Error != record.ErrHTTP5xx || r.RetryStop != record.RetryStopIssuing || len(r.Attempts) != 0 {
		t.Errorf("record: error %q, retry_stop %q, %d earlier attempts; want http_5xx, %q, none",
			r.Error, r.RetryStop, len(r.Attempts), record.RetryStopIssuing)
	}
}

// localFailClient fails every request at once for lack of a local
// resource, as a dial does when the process is out of file descriptors.
type localFailClient struct{}

func (localFailClient) Do(_ context.Context, _ *protocol.Request, t *protocol.Trace) {
	t.Reset()
	t.Start, t.End = time.Now(), time.Now()
	t.Err, t.ErrMsg = record.ErrClientResource, "socket: too many open files"
}

// TestUserBacksOffOnLocalResourceErrors: a user whose requests fail with
// client_resource waits 50 ms, 100 ms, ... up to 1 s between them instead of
// spinning: in 3 simulated seconds it sends 50+100+200+400+800+1000 ≈ 2.55 s
// worth of waits, i.e. 7 requests, not millions.
func TestUserBacksOffOnLocalResourceErrors(t *testing.T) {
	simulated(t, func(t *testing.T) {
		rs := collect(t, Config{Client: localFailClient{}, Source: fixedSource{}, Render: render, Clock: TimerClock{},
			Shape: ClosedLoop{Users: 1}, Duration: 3 * time.Second, Grace: time.Second}, context.Background())
		if len(rs) != 7 {
			t.Fatalf("%d requests in 3 s, want 7 (backing off 50 ms doubling to 1 s)", len(rs))
		}
	})
}

// TestRetryAfterBeyondCapNoStorm: a server answering every request with
// 429 and Retry-After: 3600, far past max_retry_after, ends each
// request's retries (retry_after); the closed-loop user then waits
// max_retry_after before its next request instead of firing again at
// once, so 2 users in 1 s with a 250 ms cap send at most 2 × (1 s / 250
// ms + 1) requests. Before, they sent thousands (25,234 in 4 s).
func TestRetryAfterBeyondCapNoStorm(t *testing.T) {
	t.Parallel()
	var s scripted
	url := s.start(t, func(_ int, w http.ResponseWriter) { replyStatus(w, 429, "3600") })
	client, err := protocol.NewOpenAI(protocol.OpenAIOptions{BaseURL: url})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(client.Close)
	const users, duration, capWait = 2, time.Second, 250 * time.Millisecond
	recs := collect(t, Config{Client: client, Source: fixedSource{}, Render: renderPlain, Shape: ClosedLoop{Users: users},
		Duration: duration, Retry: RetryPolicy{MaxAttempts: 3, MaxRetryAfter: capWait}, Seed: 1}, context.Background())
	if most := users * int(duration/capWait+1); s.count() > most || len(recs) > most {
		t.Fatalf("%d hits, %d records in %v from %d users; want at most %d (one per %v a user)",
			s.count(), len(recs), duration, users, most, capWait)
	}
	if len(recs) < users {
		t.Fatalf("%d records, want at least one a user", len(recs))
	}
	stopped := 0 // a user's last request may end its retries because issuing stopped
	for _, r := range recs {
		if r.RetryStop == record.RetryStopIssuing && stopped < users {
			stopped++
			continue
		}
		if r.RetryStop != record.RetryStopRetryAfter || r.Error != record.ErrHTTP429 || len(r.Attempts) != 0 {
			t.Errorf("record: stop %q error %q attempts %d; want retry_after, http_429, one attempt", r.RetryStop, r.Error, 1+len(r.Attempts))
		}
	}
}
