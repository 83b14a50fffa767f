package engine

import (
	"context"
	"errors"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/inferload/inferload/protocol"
	"github.com/inferload/inferload/record"
)

// Retry defaults, after the clients and proxies people run in production:
// OpenAI's SDKs back off from 0.5 s to 8 s and honour Retry-After up to a
// minute; Envoy's retry budget allows 20% extra attempts.
const (
	DefaultInitialBackoff   = 500 * time.Millisecond
	DefaultMaxBackoff       = 8 * time.Second
	DefaultMaxRetryAfter    = 60 * time.Second
	DefaultBudgetRatio      = 0.2
	DefaultBudgetMinRetries = 10
	DefaultBudgetWindow     = 10 * time.Second
)

// RetryPolicy says when a failed attempt is tried again, as a real client
// would: on 429, 503 and timeouts only, with exponential backoff and full
// jitter, honouring the server's Retry-After, within a retry budget. The
// zero value (MaxAttempts 0 or 1) never retries. Zero durations and
// ratios take the Default* values.
type RetryPolicy struct {
	// MaxAttempts is the most attempts per request, the first included.
	MaxAttempts int
	// InitialBackoff is the backoff cap before the first retry; it doubles
	// per retry up to MaxBackoff, and the wait is drawn uniformly from
	// [0, cap] (full jitter), so retrying clients do not move in lockstep.
	InitialBackoff time.Duration
	MaxBackoff     time.Duration
	// MaxRetryAfter is the longest Retry-After honoured: a server asking
	// for more ends the request's retries (RetryStopRetryAfter).
	MaxRetryAfter time.Duration
	// BudgetRatio caps retries at this fraction of the first attempts
	// started in the last BudgetWindow, with BudgetMinRetries always
	// allowed, so a struggling server sees at most that much extra load.
	BudgetRatio      float64
	BudgetMinRetries int
	BudgetWindow     time.Duration
}

func (p *RetryPolicy) enabled() bool { return p.MaxAttempts > 1 }

func (p *RetryPolicy) validate() error {
	if p.MaxAttempts < 0 || p.InitialBackoff < 0 || p.MaxBackoff < 0 || p.MaxRetryAfter < 0 ||
		p.BudgetRatio < 0 || p.BudgetMinRetries < 0 || p.BudgetWindow < 0 {
		return errors.New("engine: retry settings must not be negative")
	}
	return nil
}

// withDefaults fills the zero fields.
func (p RetryPolicy) withDefaults() RetryPolicy {
	orDur := func(d *time.Duration, def time.Duration) {
		if *d == 0 {
			*d = def
		}
	}
	orDur(&p.InitialBackoff, DefaultInitialBackoff)
	orDur(&p.MaxBackoff, DefaultMaxBackoff)
	orDur(&p.MaxRetryAfter, DefaultMaxRetryAfter)
	orDur(&p.BudgetWindow, DefaultBudgetWindow)
	if p.BudgetRatio == 0 {
		p.BudgetRatio = DefaultBudgetRatio
	}
	if p.BudgetMinRetries == 0 {
		p.BudgetMinRetries = DefaultBudgetMinRetries
	}
	return p
}

// retryable reports whether a real client would try this failure again:
// the server said "later" (429, 503) or the request timed out. Other 4xx
// replies are the caller's fault and other failures are not transient by
// contract, so they are never retried.
func retryable(tr *protocol.Trace) bool {
	switch tr.Err {
	case record.ErrHTTP429, record.ErrConnectTimeout, record.ErrTimeoutBeforeTTFT, record.ErrTimeoutAfterTTFT:
		return true
	case record.ErrHTTP5xx:
		return tr.Status == 503
	}
	return false
}

// backoff is the wait before retry n (1-based): the server's Retry-After
// when it sent one, else full jitter under an exponentially growing cap.
func (p *RetryPolicy) backoff(n int, retryAfter time.Duration, rng *rand.Rand) time.Duration {
	if retryAfter > 0 {
		return retryAfter
	}
	limit := p.InitialBackoff
	for i := 1; i < n && limit < p.MaxBackoff; i++ {
		limit *= 2
	}
	limit = min(limit, p.MaxBackoff)
	return time.Duration(rng.Int64N(int64(limit) + 1))
}

// retryOutcome is what the retry loop adds to a request's record.
type retryOutcome struct {
	attempts   []record.Attempt
	stop       string
	firstStart time.Time // the first attempt's Do, for queue delay
}

// doWithRetries sends p until it succeeds, fails for good, or the policy,
// the budget or ctx says stop. tr ends up describing the last attempt.
func (e *Engine) doWithRetries(ctx context.Context, i uint64, p prepared, tr *protocol.Trace) *retryOutcome {
	pol := &e.retry
	e.budget.note(e.runUS(), false)
	out := &retryOutcome{}
	var rng *rand.Rand
	for n := 1; ; n++ {
		p.req.Attempt = n - 1 // each attempt its own span
		e.cfg.Client.Do(ctx, p.req, tr)
		if n == 1 {
			out.firstStart = tr.Start
		}
		if !retryable(tr) || ctx.Err() != nil {
			return out
		}
		switch {
		case e.issuing.Err() != nil:
			// The grace period is for requests in flight, not new
			// attempts; the record keeps this attempt's real error.
			out.stop = record.RetryStopIssuing
			return out
		case n >= pol.MaxAttempts:
			out.stop = record.RetryStopAttempts
			return out
		case tr.RetryAfter > pol.MaxRetryAfter:
			out.stop = record.RetryStopRetryAfter
			return out
		case !e.budget.note(e.runUS(), true):
			out.stop = record.RetryStopBudget
			return out
		}
		if rng == nil {
			rng = newRNG(e.cfg.Seed^0x5bd1e995, i) // reproducible jitter per request
		}
		wait := pol.backoff(n, tr.RetryAfter, rng)
		if stop, ok := e.backOff(ctx, wait); !ok {
			out.stop = stop
			return out
		}
		out.attempts = append(out.attempts, e.attemptOf(tr, wait))
	}
}

// backOff waits before a retry. It ends early, with the reason no retry
// follows, when the request is canceled or issuing stops.
func (e *Engine) backOff(ctx context.Context, wait time.Duration) (stop string, ok bool) {
	sleep, cancel := context.WithCancel(ctx)
	defer cancel()
	defer context.AfterFunc(e.issuing, cancel)()
	if e.clock.SleepUntil(sleep, e.clock.Now().Add(wait)) {
		return "", true
	}
	if ctx.Err() == nil && e.issuing.Err() != nil {
		return record.RetryStopIssuing, false
	}
	return record.RetryStopStopped, false
}

// attemptOf summarises a failed attempt that is about to be retried.
func (e *Engine) attemptOf(tr *protocol.Trace, wait time.Duration) record.Attempt {
	return record.Attempt{
		SendUS: e.offset(sentOrStart(tr)), EndUS: e.offset(tr.End),
		Status: tr.Status, Error: tr.Err,
		RetryAfterUS: tr.RetryAfter.Microseconds(), WaitUS: wait.Microseconds(),
	}
}

// sentOrStart is when an attempt went out, or when it began if it never
// got a connection.
func sentOrStart(tr *protocol.Trace) time.Time {
	if tr.Sent.IsZero() {
		return tr.Start
	}
	return tr.Sent
}

// runUS is now on the run clock.
func (e *Engine) runUS() int64 { return e.sinceStartUS() }

// budgetBuckets is the sliding window's resolution: the window moves in
// steps of a tenth of its length.
const budgetBuckets = 10

// retryBudget bounds retries to a fraction of recent first attempts over
// a sliding window (Envoy's retry budget, gRPC's retry throttling), so a
// retry storm cannot multiply the load on a server that is already failing.
type retryBudget struct {
	mu         sync.Mutex
	ratio      float64
	minRetries int64
	bucketUS   int64
	epoch      [budgetBuckets]int64 // which window step each bucket holds
	firsts     [budgetBuckets]int64
	retries    [budgetBuckets]int64
}

func newRetryBudget(p *RetryPolicy) *retryBudget {
	return &retryBudget{ratio: p.BudgetRatio, minRetries: int64(p.BudgetMinRetries),
		bucketUS: max(p.BudgetWindow.Microseconds()/budgetBuckets, 1)}
}

// note counts a first attempt (retry false, always allowed) or asks for a
// retry, which it counts and allows only while retries in the window stay
// within max(minRetries, ratio × first attempts).
func (b *retryBudget) note(nowUS int64, retry bool) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	step := nowUS / b.bucketUS
	slot := step % budgetBuckets
	if b.epoch[slot] != step {
		b.epoch[slot], b.firsts[slot], b.retries[slot] = step, 0, 0
	}
	if !retry {
		b.firsts[slot]++
		return true
	}
	var firsts, retries int64
	for k := range budgetBuckets {
		if step-b.epoch[k] < budgetBuckets {
			firsts += b.firsts[k]
			retries += b.retries[k]
		}
	}
	if float64(retries) >= max(float64(b.minRetries), b.ratio*float64(firsts)) {
		return false
	}
	b.retries[slot]++
	return true
}
