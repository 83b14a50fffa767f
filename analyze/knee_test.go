package analyze

import (
	"slices"
	"strings"
	"testing"

	"github.com/inferload/inferload/record"
)

// step builds a valid closed-loop step with the given load, output token
// throughput and TTFT/E2E P90 in ms.
func step(i int, users, tokPerS, ttft, e2e float64) record.Step {
	return record.Step{Index: i, Kind: record.StepConstant, Mode: record.ModeClosed, Target: users,
		Throughput: record.Throughput{OutputTokensPerS: tokPerS, RequestsPerS: tokPerS / 100},
		Metrics:    record.Metrics{TTFT: record.Stats{P90: ttft}, E2E: record.Stats{P90: e2e}},
		Validity:   record.Validity{Valid: true}}
}

func invalid(s record.Step) record.Step { s.Validity.Valid = false; return s }

func TestFindKnee(t *testing.T) {
	t.Parallel()
	// A server that saturates at 8 users: throughput doubles up to 8, then
	// stays flat while latency doubles.
	sat := []record.Step{
		step(1, 1, 100, 10, 100), step(2, 2, 200, 10, 100), step(3, 4, 400, 11, 102),
		step(4, 8, 790, 12, 105), step(5, 16, 800, 60, 210), step(6, 32, 805, 180, 420),
	}
	tests := []struct {
		name      string
		steps     []record.Step
		opts      KneeOptions
		found     bool
		load, rec float64
		evidence  []int
		reason    string
	}{
		// The textbook case: the knee is the last step before the flat part, 80% of 8 users is 6.
		{"saturates at 8", sat, KneeOptions{}, true, 8, 6, []int{4, 5}, "the knee is 8 users; run at 6 users (80% of it)"},
		// A stricter throughput threshold (50%) finds the same knee; a lower operating fraction moves the advice.
		{"operating fraction", sat, KneeOptions{ThroughputGain: 0.5, OperatingFraction: 0.5}, true, 8, 4, []int{4, 5}, "run at 4 users (50% of it)"},
		// Still scaling at the top: no knee, and the reason says to go higher.
		{"still scaling", sat[:4], KneeOptions{}, false, 0, 0, []int{}, "no knee up to 8 users"},
		// 20% more throughput for twice the users with latency doubling: a knee
		// at the default 25%, none when 10% is asked for.
		{"partly full batch", []record.Step{step(1, 8, 790, 12, 105), step(2, 16, 950, 60, 210)}, KneeOptions{}, true, 8, 6, []int{1, 2}, "grew 20%"},
		{"partly full batch, 10%", []record.Step{step(1, 8, 790, 12, 105), step(2, 16, 950, 60, 210)}, KneeOptions{ThroughputGain: 0.10}, false, 0, 0, []int{}, "no knee"},
		// Throughput flat but latency flat too (a think-time bound client): not a knee.
		{"flat latency", []record.Step{step(1, 1, 100, 10, 100), step(2, 2, 102, 10, 101)}, KneeOptions{}, false, 0, 0, []int{}, "no knee"},
		// The invalid step 4 is never used: 4 → 16 users still doubled throughput, so the
		// knee lands on the next valid pair (16 → 32), and the reason names step 4.
		{"invalid step left out", []record.Step{sat[0], sat[1], sat[2], invalid(sat[3]), sat[4], sat[5]}, KneeOptions{}, true, 16, 12, []int{5, 6},
			"step 4 left out"},
		// One valid step cannot show a knee.
		{"too few", []record.Step{sat[0], invalid(sat[1])}, KneeOptions{}, false, 0, 0, []int{}, "at least two are needed"},
		// Open loop: recommended rate is not rounded to whole numbers.
		{"open loop", openLoop(sat), KneeOptions{}, true, 8, 6.4, []int{4, 5}, "the knee is 8 requests/s"},
	}
	for _, tt := range tests {
		k, err := FindKnee(tt.steps, tt.opts)
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if k.Found != tt.found || k.Load != tt.load || k.Recommended != tt.rec || !slices.Equal(k.Evidence, tt.evidence) {
			t.Errorf("%s: got found=%v load=%v rec=%v evidence=%v", tt.name, k.Found, k.Load, k.Recommended, k.Evidence)
		}
		if !strings.Contains(k.Reason, tt.reason) {
			t.Errorf("%s: reason %q does not contain %q", tt.name, k.Reason, tt.reason)
		}
	}
}

func TestFindKneeRejectsUnknownPercentile(t *testing.T) {
	t.Parallel()
	if _, err := FindKnee(nil, KneeOptions{Percentile: "p42"}); err == nil || !strings.Contains(err.Error(), "p42") {
		t.Errorf("err = %v, want one naming p42", err)
	}
}

func openLoop(steps []record.Step) []record.Step {
	out := make([]record.Step, len(steps))
	for i, s := range steps {
		s.Mode = record.ModeOpen
		out[i] = s
	}
	return out
}

// TestMsText: the knee's reason prints latencies readably: whole
// milliseconds from a second up, never an exponent.
func TestMsText(t *testing.T) {
	t.Parallel()
	for in, want := range map[float64]string{11610: "11610", 1000: "1000", 661.2: "661.2", 48: "48", 0.5: "0.5"} {
		if got := msText(in); got != want {
			t.Errorf("msText(%v) = %q, want %q", in, got, want)
		}
	}
}
