package analyze

import (
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/inferload/inferload/record"
)

func TestJudge(t *testing.T) {
	t.Parallel()
	base := func(mode string, target, achieved float64, e2eCount, succeeded, late int64) record.Step {
		return record.Step{Index: 1, Kind: record.StepConstant, Mode: mode, Target: target,
			Requests: record.Requests{Succeeded: succeeded, Late: late},
			Metrics:  record.Metrics{E2E: record.Stats{Count: e2eCount}, TTFT: record.Stats{Count: e2eCount}},
			Validity: record.Validity{AchievedLoad: achieved}}
	}
	tests := []struct {
		name      string
		step      record.Step
		valid     bool
		saturated bool
		e2e       string
		reason    string
		kinds     string // Validity.Kinds, comma-joined: one per reason
	}{
		// Enough samples for P99, load as intended: valid, nothing to say.
		{"healthy", base(record.ModeClosed, 8, 7.9, 400, 400, 0), true, false, "p99", "", ""},
		// 20 samples cannot back the P90 the knee reads (29 needed).
		{"too few samples", base(record.ModeClosed, 8, 8, 20, 20, 0), false, false, "p50", "cannot back an E2E p90", "samples"},
		// 8 users planned, 5 achieved: the client did not apply the load.
		{"load not achieved", base(record.ModeClosed, 8, 5, 400, 400, 0), false, false, "p99", "38% below the intended 8", "load"},
		// 5% of open-loop requests late: the client was saturated.
		{"late sends", base(record.ModeOpen, 50, 50, 1000, 1000, 50), false, true, "p99", "started late", "late"},
		// Poisson at 4/s for 12 s achieved 3.59/s (43 arrivals): 10% below,
		// but 43 bounds the rate at 4.6/s, ordinary scatter: valid.
		{"poisson scatter", withWindow(base(record.ModeOpen, 4, 3.59, 400, 400, 0), 12), true, false, "p99", "", ""},
		// 3/s of 4/s over 120 s (360 arrivals, bound 3.3/s): a real shortfall.
		{"open shortfall", withWindow(base(record.ModeOpen, 4, 3, 400, 400, 0), 120), false, false, "p99", "beyond Poisson scatter", "load"},
		// 1 late request of 60: a hiccup, under the minimum count of 5.
		{"one late of 60", base(record.ModeOpen, 5, 5, 60, 60, 1), true, false, "p95", "", ""},
		// 4 late of 60 is 6.7%, but still under the minimum count.
		{"four late of 60", base(record.ModeOpen, 5, 5, 60, 60, 4), true, false, "p95", "", ""},
		// 12 late of 1000 is above 1% but P(Binomial(1000, 1%) ≥ 12) ≈ 0.3: not significant.
		{"12 late of 1000", base(record.ModeOpen, 50, 50, 1000, 1000, 12), true, false, "p99", "", ""},
		// 10.6% late of 1000 (the report): saturated.
		{"106 late of 1000", base(record.ModeOpen, 50, 50, 1000, 1000, 106), false, true, "p99", "106 of 1000 requests", "late"},
		// A ramp is judged against its mean load: 4→12 means 8, and 7.5 is within 10%.
		{"ramp mean", func() record.Step {
			s := base(record.ModeClosed, 12, 7.5, 400, 400, 0)
			s.Kind, s.From = record.StepRamp, 4
			return s
		}(), true, false, "p99", "", ""},
	}
	for _, tt := range tests {
		s := tt.step
		if err := Judge(&s, Criteria{}); err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		v := s.Validity
		if v.Valid != tt.valid || v.ClientSaturated != tt.saturated || v.Percentiles["e2e"] != tt.e2e {
			t.Errorf("%s: valid=%v saturated=%v e2e=%q reasons=%q", tt.name, v.Valid, v.ClientSaturated, v.Percentiles["e2e"], v.Reasons)
		}
		joined := strings.Join(v.Reasons, "; ")
		if (tt.reason == "") != (joined == "") || !strings.Contains(joined, tt.reason) {
			t.Errorf("%s: reasons %q, want %q", tt.name, joined, tt.reason)
		}
		if got := strings.Join(v.Kinds, ","); got != tt.kinds || len(v.Kinds) != len(v.Reasons) {
			t.Errorf("%s: kinds %q for %d reasons, want %q", tt.name, got, len(v.Reasons), tt.kinds)
		}
	}
}

func withWindow(s record.Step, windowS float64) record.Step {
	s.WindowS = windowS
	return s
}

func TestPoissonUpper(t *testing.T) {
	t.Parallel()
	// Garwood's one-sided 95% bounds (χ²(0.95, 2k+2)/2): 1 → 4.744, 43 → 55.45, 1000 → 1052.8.
	for _, tt := range []struct{ count, want float64 }{{1, 4.744}, {43, 55.45}, {1000, 1052.8}} {
		if got := PoissonUpper(tt.count, 0.95); math.Abs(got-tt.want) > 0.01*tt.want {
			t.Errorf("PoissonUpper(%v) = %.2f, want %.2f", tt.count, got, tt.want)
		}
	}
}

func TestJudgeRejectsUnknownPercentile(t *testing.T) {
	t.Parallel()
	s := record.Step{}
	if err := Judge(&s, Criteria{Required: "p12"}); err == nil {
		t.Error("Judge accepted percentile p12")
	}
}

// TestJudgeRun: a single-phase run is judged as one constant step, gets
// its classes' backing, and is invalid when telemetry found the client
// saturated.
func TestJudgeRun(t *testing.T) {
	t.Parallel()
	metrics := func(n int64) record.Metrics {
		return record.Metrics{E2E: record.Stats{Count: n}, TTFT: record.Stats{Count: n}, ITL: record.Stats{Count: 10 * n}, TPOT: record.Stats{Count: n}}
	}
	run := func(n int64) *record.Summary {
		return &record.Summary{Mode: record.ModeClosed, WindowS: 10, Requests: record.Requests{Succeeded: n}, Metrics: metrics(n)}
	}
	tests := []struct {
		name    string
		s       *record.Summary
		load    RunLoad
		valid   bool
		reason  string
		classes map[string]map[string]string
		kinds   string // Validity.Kinds, comma-joined
	}{
		// 400 samples, 8 users planned and 7.9 applied: valid, no class table.
		{"healthy", run(400), RunLoad{Intended: 8, Achieved: 7.9}, true, "", nil, ""},
		// No intended load (a trace): only the samples are judged.
		{"no intended load", run(400), RunLoad{Achieved: 3}, true, "", nil, ""},
		// 8 users planned, 5 applied: invalid, as a step would be.
		{"load not achieved", run(400), RunLoad{Intended: 8, Achieved: 5}, false, "below the intended 8", nil, "load"},
		// The client was saturated: invalid whatever the load says.
		{"client saturated", func() *record.Summary {
			s := run(400)
			s.Client = &record.ClientTelemetry{Saturated: true}
			return s
		}(), RunLoad{Intended: 8, Achieved: 8}, false, "the load generator itself was saturated", nil, "client_saturated"},
		// Two classes, 300 and 30 requests (ten ITL gaps each): each class
		// says what its own samples back by the one binomial rule (P99.9
		// needs 2995, P99 299, P90 29).
		{"classes", func() *record.Summary {
			s := run(330)
			s.Classes = map[string]*record.Breakdown{"chat": {Metrics: metrics(300)}, "doc": {Metrics: metrics(30)}}
			return s
		}(), RunLoad{}, true, "", map[string]map[string]string{
			"chat": {"ttft": "p99", "itl": "p999", "tpot": "p99", "e2e": "p99"},
			"doc":  {"ttft": "p90", "itl": "p99", "tpot": "p90", "e2e": "p90"},
		}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if err := JudgeRun(tt.s, tt.load, Criteria{}); err != nil {
				t.Fatal(err)
			}
			v := tt.s.Validity
			joined := strings.Join(v.Reasons, "; ")
			if v.Valid != tt.valid || (tt.reason == "") != (joined == "") || !strings.Contains(joined, tt.reason) {
				t.Errorf("valid=%v reasons=%q, want valid=%v reason %q", v.Valid, joined, tt.valid, tt.reason)
			}
			if got := strings.Join(v.Kinds, ","); got != tt.kinds || len(v.Kinds) != len(v.Reasons) {
				t.Errorf("kinds %q for %d reasons, want %q", got, len(v.Reasons), tt.kinds)
			}
			if v.AchievedLoad != tt.load.Achieved || v.Percentiles["e2e"] == "" {
				t.Errorf("validity %+v: want achieved %v and the backed percentiles", v, tt.load.Achieved)
			}
			if !reflect.DeepEqual(v.Classes, tt.classes) {
				t.Errorf("classes = %v, want %v", v.Classes, tt.classes)
			}
		})
	}
}
