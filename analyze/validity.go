package analyze

import (
	"fmt"

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
	// MaxLate is the largest fraction of measured open-loop requests that
	// may start late before the client counts as saturated (default 0.01).
	MaxLate float64
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
	v.Valid, v.Reasons, v.ClientSaturated = true, []string{}, false
	invalid := func(format string, args ...any) {
		v.Valid = false
		v.Reasons = append(v.Reasons, fmt.Sprintf(format, args...))
	}
	judgeSamples(s, c, q, invalid)
	judgeLoad(s, c, invalid)
	judgeLate(s, c, invalid)
	return nil
}

// judgeSamples records which percentile each metric backs and fails a step
// whose E2E sample cannot back the percentile the knee reads.
func judgeSamples(s *record.Step, c Criteria, q float64, invalid func(string, ...any)) {
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
		invalid("%d successful measured requests cannot back an E2E %s at %.0f%% confidence (%d needed): run the step longer",
			m.E2E.Count, c.Required, c.Confidence*100, need)
	}
}

// judgeLoad compares the achieved load with the intended one (a ramp's
// mean).
func judgeLoad(s *record.Step, c Criteria, invalid func(string, ...any)) {
	intended := s.Target
	if s.Kind == record.StepRamp {
		intended = (s.From + s.Target) / 2
	}
	got := s.Validity.AchievedLoad
	if intended <= 0 || got >= intended*(1-c.LoadTolerance) {
		return
	}
	unit := "users"
	if s.Mode == record.ModeOpen {
		unit = "requests/s"
	}
	invalid("achieved load %.3g %s is %.0f%% below the intended %.3g", got, unit, (1-got/intended)*100, intended)
}

// judgeLate flags an open-loop step whose requests could not be sent on
// time: the client (or its in-flight cap) was the bottleneck, so the
// server saw less load than planned.
func judgeLate(s *record.Step, c Criteria, invalid func(string, ...any)) {
	measured := s.Requests.Succeeded + s.Requests.Failed
	if s.Mode != record.ModeOpen || measured == 0 {
		return
	}
	frac := float64(s.Requests.Late) / float64(measured)
	if frac <= c.MaxLate {
		return
	}
	s.Validity.ClientSaturated = true
	invalid("%.1f%% of requests started late (more than %.0f%% allowed): the client or its in-flight cap could not keep the schedule",
		frac*100, c.MaxLate*100)
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
	if err := Judge(&step, c); err != nil {
		return err
	}
	v := &step.Validity
	v.Classes = classBacking(s, c.withDefaults().Confidence)
	if s.Client != nil && s.Client.Saturated && !v.ClientSaturated {
		v.ClientSaturated, v.Valid = true, false
		v.Reasons = append(v.Reasons, "the load generator itself was saturated (see client): the server saw less load than planned")
	}
	s.Validity = v
	return nil
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
