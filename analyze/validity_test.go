package analyze

import (
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
	}{
		// Enough samples for P99, load as intended: valid, nothing to say.
		{"healthy", base(record.ModeClosed, 8, 7.9, 400, 400, 0), true, false, "p99", ""},
		// 20 samples cannot back the P90 the knee reads (29 needed).
		{"too few samples", base(record.ModeClosed, 8, 8, 20, 20, 0), false, false, "p50", "cannot back an E2E p90"},
		// 8 users planned, 5 achieved: the client did not apply the load.
		{"load not achieved", base(record.ModeClosed, 8, 5, 400, 400, 0), false, false, "p99", "38% below the intended 8"},
		// 5% of open-loop requests late: the client was saturated.
		{"late sends", base(record.ModeOpen, 50, 50, 1000, 1000, 50), false, true, "p99", "started late"},
		// A ramp is judged against its mean load: 4→12 means 8, and 7.5 is within 10%.
		{"ramp mean", func() record.Step {
			s := base(record.ModeClosed, 12, 7.5, 400, 400, 0)
			s.Kind, s.From = record.StepRamp, 4
			return s
		}(), true, false, "p99", ""},
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
	}
}

func TestJudgeRejectsUnknownPercentile(t *testing.T) {
	t.Parallel()
	s := record.Step{}
	if err := Judge(&s, Criteria{Required: "p12"}); err == nil {
		t.Error("Judge accepted percentile p12")
	}
}
