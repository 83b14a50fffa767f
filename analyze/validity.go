package analyze

import (
	"fmt"
	"math"

	"github.com/inferload/inferload/internal/normal"
	"github.com/inferload/inferload/record"
)

// Criteria are the rules a step must meet to count. The zero value of
// each field means its default.
type Criteria struct {
	// Confidence backs percentile claims (default 0.95).
	Confidence float64
	// Required is the percentile the knee reads (default "p90"): a step
	// whose E2E samples do not back it is invalid.
	Required string
	// LoadTolerance is how far below the intended load the achieved one
	// may fall (default 0.10: 10%).
	LoadTolerance float64
	// MaxLate is the share of measured open-loop requests that may start
	// late (default 0.01): the client counts as saturated only when the
	// late count is significantly above it at Confidence (a binomial
	// test) and at least MinLate.
	MaxLate float64
	// MinLate is the fewest late starts that can make a run invalid
	// (default 5): one late request of 60 is a hiccup, not a saturated
	// client.
	MinLate int64
	// ServerBound: the late starts waited on an in-flight cap a server
	// that fell behind held full, while the client had room (Diagnose
	// finds it, record.ClientTelemetry.ServerBound): they still make the
	// run invalid (the schedule was not applied) but are the server's
	// saturation, not the client's. Never read from a design file.
	ServerBound bool `json:"-"`
}

func (c Criteria) withDefaults() Criteria {
	if c.Confidence == 0 {
		c.Confidence = 0.95
	}
	if c.Required == "" {
		c.Required = "p90"
	}
	if c.LoadTolerance == 0 {
		c.LoadTolerance = 0.10
	}
	if c.MaxLate == 0 {
		c.MaxLate = 0.01
	}
	if c.MinLate == 0 {
		c.MinLate = 5
	}
	return c
}

// Judge fills s.Validity from the step's figures. s.Validity.AchievedLoad
// must already hold the load the client actually applied (the mean number
// of requests in flight in a closed loop, the issue rate in an open one).
func Judge(s *record.Step, c Criteria) error {
	c = c.withDefaults()
	q, err := percentileQ(c.Required)
	if err != nil {
		return fmt.Errorf("criteria: %w", err)
	}
	v := &s.Validity
	v.Valid, v.Reasons, v.Kinds, v.ClientSaturated = true, []string{}, []string{}, false
	invalid := func(kind, format string, args ...any) {
		v.Invalidate(kind, fmt.Sprintf(format, args...))
	}
	judgeSamples(s, c, q, invalid)
	judgeLoad(s, c, invalid)
	judgeLate(s, c, invalid)
	if n := s.Requests.ClientFailed; n > 0 {
		v.ClientSaturated = true
		invalid(record.InvalidClientFailed, "%d requests failed in the load generator itself (client_resource: out of file descriptors, local ports or its reply budget): the target saw less load than planned", n)
	}
	return nil
}

// invalidator makes the step being judged invalid under a rule (a
// record.Invalid* kind), with the reason's sentence.
type invalidator func(kind, format string, args ...any)

// judgeSamples records which percentile each metric backs and fails a step
// whose E2E sample cannot back the percentile the knee reads.
func judgeSamples(s *record.Step, c Criteria, q float64, invalid invalidator) {
	m := s.Metrics
	counts := []struct {
		name string
		n    int64
	}{{"ttft", m.TTFT.Count}, {"itl", m.ITL.Count}, {"tpot", m.TPOT.Count}, {"e2e", m.E2E.Count}}
	s.Validity.Percentiles = make(map[string]string, len(counts))
	for _, x := range counts {
		s.Validity.Percentiles[x.name] = Backed(x.n, c.Confidence)
	}
	if need := MinSamples(q, c.Confidence); m.E2E.Count < int64(need) {
		invalid(record.InvalidSamples, "%d successful measured requests cannot back an E2E %s at %.0f%% confidence (%d needed): run the step longer",
			m.E2E.Count, c.Required, c.Confidence*100, need)
	}
}

// judgeLoad compares the achieved load with the intended one (a ramp's
// mean). An open loop's arrival count scatters (Poisson: 48 expected
// arrivals give 43 or fewer one time in five), so its rate is judged by
// the upper end of the Poisson interval for the count it achieved: the
// step is invalid only when even that is LoadTolerance below the intended
// rate. A closed loop's users are held, so its mean in flight is judged
// directly.
func judgeLoad(s *record.Step, c Criteria, invalid invalidator) {
	intended := s.Target
	if s.Kind == record.StepRamp {
		intended = (s.From + s.Target) / 2
	}
	got := s.Validity.AchievedLoad
	if intended <= 0 || got >= intended*(1-c.LoadTolerance) {
		return
	}
	if s.Mode != record.ModeOpen {
		invalid(record.InvalidLoad, "achieved load %.3g users is %.0f%% below the intended %.3g", got, (1-got/intended)*100, intended)
		return
	}
	if s.WindowS <= 0 {
		return
	}
	count := math.Round(got * s.WindowS)
	upper := PoissonUpper(count, c.Confidence) / s.WindowS
	if upper >= intended*(1-c.LoadTolerance) {
		return
	}
	invalid(record.InvalidLoad, "achieved load %.3g requests/s is %.0f%% below the intended %.3g, beyond Poisson scatter (%.0f arrivals in %.3g s: at most %.3g/s at %.0f%% confidence)",
		got, (1-got/intended)*100, intended, count, s.WindowS, upper, c.Confidence*100)
}

// PoissonUpper is the upper confidence bound on a Poisson mean from an
// observed count (Garwood's exact bound, by the Wilson–Hilferty cube-root
// approximation of its chi-square quantile, within 0.1% from a count of
// 1): 43 arrivals bound the mean at 55.4 at 95% (one-sided).
func PoissonUpper(count, confidence float64) float64 {
	k := count + 1
	z := normal.Quantile(confidence)
	return k * math.Pow(1-1/(9*k)+z/(3*math.Sqrt(k)), 3)
}

// judgeLate flags an open-loop step whose requests could not be sent on
// time: the client (or its in-flight cap) was the bottleneck, so the
// server saw less load than planned.
func judgeLate(s *record.Step, c Criteria, invalid invalidator) {
	measured := s.Requests.Succeeded + s.Requests.Failed
	if s.Mode != record.ModeOpen || !TooManyLate(s.Requests.Late, measured, c) {
		return
	}
	if c.ServerBound {
		invalid(record.InvalidServerBound, "%d of %d requests (%.1f%%) started late, significantly more than the %.0f%% allowed, waiting for the in-flight cap, which the server held full while it fell behind the schedule (the client had room: see client): the server is saturated at this rate; lower it or find the knee with a sweep",
			s.Requests.Late, measured, 100*float64(s.Requests.Late)/float64(measured), c.MaxLate*100)
		return
	}
	s.Validity.ClientSaturated = true
	invalid(record.InvalidLate, "%d of %d requests (%.1f%%) started late, significantly more than the %.0f%% allowed: the client or its in-flight cap could not keep the schedule",
		s.Requests.Late, measured, 100*float64(s.Requests.Late)/float64(measured), c.MaxLate*100)
}

// TooManyLate is the late-start rule: at least MinLate of measured
// requests started late, and so many that a client which starts at most
// MaxLate of its requests late would show that many with probability under
// 1 − Confidence (the binomial upper tail). 1 late of 60 passes; 10% of
// 1 000 does not.
func TooManyLate(late, measured int64, c Criteria) bool {
	c = c.withDefaults()
	if measured <= 0 || late < c.MinLate || float64(late) <= c.MaxLate*float64(measured) {
		return false
	}
	return binomUpperTail(int(measured), int(late), c.MaxLate) < 1-c.Confidence
}

// binomUpperTail is P(Binomial(n, p) ≥ k) for k above the mean, summed
// until the terms no longer count.
func binomUpperTail(n, k int, p float64) float64 {
	sum := 0.0
	for j := k; j <= n; j++ {
		term := binomPMF(n, j, p)
		sum += term
		if term < sum*1e-17 {
			break
		}
	}
	return sum
}

// RunLoad is the load a single-phase run meant to apply and the load it
// achieved, in one unit: users in a closed loop, requests/s in an open one.
type RunLoad struct {
	// Intended is 0 when there is no one number to hold the run to (a
	// replayed trace, compute pacing, users who think between requests).
	Intended float64
	// Achieved is record.Aggregate.AchievedLoad over the measured window.
	Achieved float64
}

// JudgeRun fills s.Validity of a single-phase run with the rules a sweep's
// steps get (Judge), the run judged as one constant step at load.Intended,
// from figures the records alone determine, so the live run and a rebuild
// agree. With several request classes it adds each class's backing; a
// client that telemetry found saturated (s.Client, from observe.Summarize)
// makes the run invalid.
func JudgeRun(s *record.Summary, load RunLoad, c Criteria) error {
	step := record.Step{Kind: record.StepConstant, Mode: s.Mode, Target: load.Intended,
		WindowS: s.WindowS, Requests: s.Requests, Metrics: s.Metrics}
	step.Validity.AchievedLoad = load.Achieved
	c.ServerBound = s.Client != nil && s.Client.ServerBound
	if err := Judge(&step, c); err != nil {
		return err
	}
	v := &step.Validity
	v.Classes = classBacking(s, c.withDefaults().Confidence)
	if s.Client != nil && s.Client.Saturated && !v.ClientSaturated {
		v.ClientSaturated = true
		v.Invalidate(record.InvalidClientSaturated, "the load generator itself was saturated (see client): the server saw less load than planned")
	}
	for _, seg := range LaggingSegments(s, c) {
		v.ClientSaturated = true
		v.Invalidate(record.InvalidSegmentLate, fmt.Sprintf("segment %s started %d of its %d requests late: that machine could not keep its share of the schedule",
			seg.Segment, seg.Requests.Late, seg.Requests.Succeeded+seg.Requests.Failed))
	}
	s.Validity = v
	return nil
}

// LaggingSegments are the segments of a merged run whose own late starts
// fail the late-start rule (TooManyLate): one lagging machine among ten
// is a tenth of the late starts overall, under the rule for the whole, but
// its share of the load was not applied.
func LaggingSegments(s *record.Summary, c Criteria) []record.SegmentFigures {
	var out []record.SegmentFigures
	for _, seg := range s.Segments {
		if TooManyLate(seg.Requests.Late, seg.Requests.Succeeded+seg.Requests.Failed, c) {
			out = append(out, seg)
		}
	}
	return out
}

// classBacking is, per request class, the highest percentile each latency
// metric's own sample count backs at the given confidence (absent with a
// single class).
func classBacking(s *record.Summary, confidence float64) map[string]map[string]string {
	if len(s.Classes) < 2 {
		return nil
	}
	out := make(map[string]map[string]string, len(s.Classes))
	for name, b := range s.Classes {
		m := b.Metrics
		out[name] = map[string]string{
			"ttft": Backed(m.TTFT.Count, confidence), "itl": Backed(m.ITL.Count, confidence),
			"tpot": Backed(m.TPOT.Count, confidence), "e2e": Backed(m.E2E.Count, confidence),
		}
	}
	return out
}
