package analyze

import (
	"strings"
	"testing"

	"github.com/inferload/inferload/observe"
	"github.com/inferload/inferload/record"
)

// TestDiagnoseClientAgreesWithLateStarts: an open-loop run that started
// 10.6% of its requests late is never "not saturated", whatever the
// client's CPU said; one late request of 60 leaves the verdict alone.
func TestDiagnoseClientAgreesWithLateStarts(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name            string
		late, succeeded int64
		saturated       bool
	}{
		{"10.6% late", 106, 1000, true},
		{"1 late of 60", 1, 60, false},
	} {
		s := &record.Summary{Mode: record.ModeOpen, Requests: record.Requests{Succeeded: tt.succeeded, Late: tt.late},
			Client: &record.ClientTelemetry{Verdict: "not saturated: CPU max 20%", PacerLagMaxMS: 150}}
		if err := Diagnose(s, Evidence{}); err != nil {
			t.Fatal(err)
		}
		if s.Client.Saturated != tt.saturated || strings.HasPrefix(s.Client.Verdict, "not") == tt.saturated {
			t.Errorf("%s: saturated %v, verdict %q", tt.name, s.Client.Saturated, s.Client.Verdict)
		}
		if tt.saturated && !strings.Contains(s.Client.Verdict, "pacer lag max 150 ms") {
			t.Errorf("%s: verdict %q does not cite the pacer lag", tt.name, s.Client.Verdict)
		}
	}
}

// TestDiagnoseHostBusyExplainsInvalidSteps: contention plus invalid steps
// earns the "host busy" warning; contention alone earns only the
// contention warning.
func TestDiagnoseHostBusyExplainsInvalidSteps(t *testing.T) {
	t.Parallel()
	busy := steady("client", 10, func(int) map[string]float64 {
		return map[string]float64{observe.ClientCPUPct: 20, observe.ClientSchedLagP99: 120}
	})
	for _, tt := range []struct {
		name  string
		steps []record.Step
		want  bool
	}{
		{"invalid steps", []record.Step{{Validity: record.Validity{Valid: true}}, {}, {}}, true},
		{"all valid", []record.Step{{Validity: record.Validity{Valid: true}}}, false},
	} {
		s := &record.Summary{Steps: tt.steps}
		if err := Diagnose(s, Evidence{Samples: busy, Info: record.RunInfo{EndUS: 10e6}}); err != nil {
			t.Fatal(err)
		}
		joined := strings.Join(s.Warnings, "\n")
		if got := strings.Contains(joined, "host busy: 2 of 3 steps were invalid"); got != tt.want {
			t.Errorf("%s: warnings %q", tt.name, s.Warnings)
		}
		if !strings.Contains(joined, "the host was busy with other work") {
			t.Errorf("%s: no contention warning in %q", tt.name, s.Warnings)
		}
	}
}
