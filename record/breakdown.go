package record

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
)

// ExpectRejection is Result.Expect for a request whose correct answer may
// be a refusal (bad input): a 4xx reply is an expected rejection, a pass,
// rather than a failure. The workload package sets the same string.
const ExpectRejection = "rejection"

// DefaultClass is the class of records that carry none.
const DefaultClass = "default"

// DefaultInputBuckets are the upper bounds, in prompt tokens, of the
// input-length buckets when none are set: ≤256, ≤1024, ≤4096 and >4096.
var DefaultInputBuckets = []int{256, 1024, 4096}

// ExpectedRejection reports whether r is a pass by refusal: a request that
// expected one (bad input) and got a 4xx reply with an error body. A 429 is
// not one: it says the server is overloaded, not that the input is bad.
func (r *Result) ExpectedRejection() bool {
	return r.Expect == ExpectRejection && r.Error == ErrHTTP4xx
}

// Breakdown is the part of a summary computed for one request class or
// one input-length bucket: the same figures, with the same meanings, as
// the run's, over that subset of requests. Percentiles come from the
// subset's own histograms, never from averaging.
type Breakdown struct {
	Requests    Requests         `json:"requests"`
	FailureRate float64          `json:"failure_rate"`
	Errors      map[string]int64 `json:"errors"`
	Metrics     Metrics          `json:"metrics"`
	FailedE2E   Stats            `json:"failed_e2e_ms"`
	Throughput  Throughput       `json:"throughput"`
	Tokens      Tokens           `json:"tokens"`
	Goodput     Goodput          `json:"goodput"`
	// ServerTime is where the time went by the server's own account; nil
	// when no reply carried server timings.
	ServerTime *ServerTimeSummary `json:"server_time,omitempty"`
	// PrefixCache compares cache hits' TTFT with misses'; nil without a
	// hit (prefixcache.go).
	PrefixCache *PrefixCacheSplit `json:"prefix_cache,omitempty"`
	// Reasoning counts the requests that reasoned; nil when none did
	// (reasoning.go).
	Reasoning *ReasoningSummary `json:"reasoning,omitempty"`
	// Accuracy is how the graded replies fared; nil when none was graded
	// (grading.go).
	Accuracy *Accuracy `json:"accuracy,omitempty"`
	// PrefixReuse sets the prefix reuse the workload asked for against
	// what the server reported; nil when no request asked (prefixreuse.go).
	PrefixReuse *PrefixReuse `json:"prefix_reuse,omitempty"`
	// Checks are the class's token-count checks (classes only; nil for
	// input buckets and for the bad-input class, whose prompts are meant
	// to be odd).
	Checks *Checks `json:"checks,omitempty"`
}

// InputBucket is a Breakdown of the requests whose prompt length (the
// client's own count, prompt_tokens_sent) lies in [MinTokens, MaxTokens].
type InputBucket struct {
	// Label is "<=256" or, for the last bucket, ">4096".
	Label     string `json:"label"`
	MinTokens int    `json:"min_tokens"`
	// MaxTokens is 0 for the last, unbounded bucket.
	MaxTokens int `json:"max_tokens"`
	Breakdown
}

// breakdowns are an aggregate's per-class and per-bucket sub-aggregates.
// Children are created on a class's or bucket's first record; they hold no
// breakdowns of their own.
type breakdowns struct {
	bounds   []int // bucket upper bounds, increasing
	classes  map[string]*Aggregate
	buckets  []*Aggregate       // len(bounds)+1, nil until used
	replicas map[int]*Aggregate // by Result.Replica; nil for a target of one
}

// ReplicaBreakdown is the figures of the requests one of the target's
// base URLs served (Result.Replica): 1 is target.url, 2 its first
// replica, ...
type ReplicaBreakdown struct {
	Replica int `json:"replica"`
	Breakdown
}

// SetInputBuckets sets the upper bounds of the input-length buckets (nil
// restores DefaultInputBuckets). Call it before the first Add; bounds must
// increase (plan validation sees to that).
func (a *Aggregate) SetInputBuckets(bounds []int) {
	if bounds == nil {
		bounds = DefaultInputBuckets
	}
	a.split.bounds = slices.Clone(bounds)
	a.split.buckets = make([]*Aggregate, len(bounds)+1)
}

// addBreakdowns folds r into its class's and its bucket's aggregates.
func (a *Aggregate) addBreakdowns(r *Result) {
	if a.child {
		return
	}
	if a.split.buckets == nil {
		a.SetInputBuckets(nil)
	}
	class := r.Class
	if class == "" {
		class = DefaultClass
	}
	if a.split.classes == nil {
		a.split.classes = make(map[string]*Aggregate)
	}
	c := a.split.classes[class]
	if c == nil {
		c = a.newChild()
		a.split.classes[class] = c
	}
	c.Add(r)
	k, _ := slices.BinarySearch(a.split.bounds, r.PromptTokensSent)
	if a.split.buckets[k] == nil {
		a.split.buckets[k] = a.newChild()
	}
	a.split.buckets[k].Add(r)
	if r.Replica > 0 {
		if a.split.replicas == nil {
			a.split.replicas = make(map[int]*Aggregate)
		}
		c := a.split.replicas[r.Replica]
		if c == nil {
			c = a.newChild()
			a.split.replicas[r.Replica] = c
		}
		c.Add(r)
	}
}

// newChild returns a sub-aggregate that judges goodput by a's objectives.
func (a *Aggregate) newChild() *Aggregate {
	c := NewAggregate()
	c.child = true
	c.slo.table = a.slo.table
	return c
}

// breakdown computes a child's figures over the run's measured window.
func (a *Aggregate) breakdown(slo SLO, from, to int64, windowS float64) Breakdown {
	b := a.figures(from, to, windowS)
	b.Goodput = a.goodput(slo, from, to, windowS)
	return b
}

// figures are the figures a run and each of its classes and buckets share:
// counts, latencies and throughput over the measured window.
func (a *Aggregate) figures(from, to int64, windowS float64) Breakdown {
	reqs, outTok, inTok := a.delivered.over(from, to)
	b := Breakdown{
		Requests:    a.requests(),
		FailureRate: a.failureRate(),
		Errors:      a.errorCounts(),
		Metrics: Metrics{
			TTFT: a.ttft.Stats(), ITL: a.runITL().Stats(), TPOT: a.tpot.Stats(),
			E2E: a.e2e.Stats(), QueueDelay: a.queue.Stats(),
		},
		FailedE2E: a.failedE2E.Stats(),
		Throughput: Throughput{
			RequestsPerS:     perSecond(reqs, windowS),
			OutputTokensPerS: perSecond(outTok, windowS),
			InputTokensPerS:  perSecond(inTok, windowS),
		},
		Tokens:      a.tokens(),
		ServerTime:  a.server.summary(),
		PrefixCache: a.cache.summary(a.ttft),
		Reasoning:   a.reasoning.summary(),
		Accuracy:    a.accuracy.summary(),
		PrefixReuse: a.reuse.summary(),
	}
	itlR, itlA := a.channelITL()
	a.reasoning.metrics(&b.Metrics, itlR, itlA)
	return b
}

// classBreakdowns returns every class seen, keyed by name.
func (a *Aggregate) classBreakdowns(from, to int64, windowS float64) map[string]*Breakdown {
	out := make(map[string]*Breakdown, len(a.split.classes))
	for name, c := range a.split.classes {
		b := c.breakdown(a.slo.table.For(name), from, to, windowS)
		if ck := c.checks.checks(); ck.InputTokensCompared+ck.MaxTokensChecked+ck.IgnoreEOSChecked > 0 {
			b.Checks = &ck
		}
		out[name] = &b
	}
	return out
}

// replicaBreakdowns returns every replica that served a request, in
// order; nil for a target of one.
func (a *Aggregate) replicaBreakdowns(from, to int64, windowS float64) []ReplicaBreakdown {
	var out []ReplicaBreakdown
	for _, k := range slices.Sorted(maps.Keys(a.split.replicas)) {
		out = append(out, ReplicaBreakdown{Replica: k, Breakdown: a.split.replicas[k].breakdown(a.slo.table.For(DefaultClass), from, to, windowS)})
	}
	return out
}

// bucketBreakdowns returns every input-length bucket in order, empty ones
// included, so the list has the same shape in every run of a plan.
func (a *Aggregate) bucketBreakdowns(from, to int64, windowS float64) []InputBucket {
	if a.split.buckets == nil {
		a.SetInputBuckets(nil)
	}
	out := make([]InputBucket, len(a.split.buckets))
	lo := 0
	for k, c := range a.split.buckets {
		if c == nil {
			c = a.newChild()
		}
		b := InputBucket{MinTokens: lo, Breakdown: c.breakdown(a.slo.table.For(DefaultClass), from, to, windowS)}
		if k < len(a.split.bounds) {
			b.MaxTokens = a.split.bounds[k]
			b.Label = "<=" + strconv.Itoa(b.MaxTokens)
			lo = b.MaxTokens + 1
		} else if lo > 0 {
			b.Label = fmt.Sprintf(">%d", lo-1)
		} else {
			b.Label = "all" // no bounds: one bucket holds every request
		}
		out[k] = b
	}
	return out
}
