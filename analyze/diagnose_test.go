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

// TestDiagnoseOverloadIsTheServers: the user's case, an open loop at 20
// requests/s against a server that completes 15/s with an in-flight cap
// of 64: the cap filled and requests started late while the client sat
// at 3% CPU. The verdict names the server (not saturated, server bound),
// the run is invalid for the server's saturation (not the client's), and
// the overload hint fires though in-flight could not grow past the cap.
// The same late starts from a client whose telemetry is saturated, or
// with completions keeping up, still blame the client.
func TestDiagnoseOverloadIsTheServers(t *testing.T) {
	t.Parallel()
	behind := record.LoadTrend{WindowS: 60, Issued: 1200, Completed: 900, InFlightFirst: 63, InFlightSecond: 64}
	keptUp := record.LoadTrend{WindowS: 60, Issued: 1200, Completed: 1190, InFlightFirst: 63, InFlightSecond: 64}
	for _, tt := range []struct {
		name        string
		client      record.ClientTelemetry
		trend       record.LoadTrend
		serverBound bool
	}{
		{"idle client, server behind", record.ClientTelemetry{CPUPctMax: 3, Verdict: "not saturated: CPU max 3%"}, behind, true},
		{"busy client, server behind", record.ClientTelemetry{CPUPctMax: 97, Saturated: true, Verdict: "SATURATED for 30 s"}, behind, false},
		{"idle client, server kept up", record.ClientTelemetry{CPUPctMax: 3, Verdict: "not saturated: CPU max 3%"}, keptUp, false},
	} {
		s := &record.Summary{Mode: record.ModeOpen, WindowS: 60, Requests: record.Requests{Succeeded: 900, Late: 300},
			Metrics: record.Metrics{E2E: record.Stats{Count: 900}}, Client: &tt.client}
		if err := Diagnose(s, Evidence{Trend: tt.trend, Load: &RunLoad{Intended: 20, Achieved: 15}}); err != nil {
			t.Fatal(err)
		}
		c, v := s.Client, s.Validity
		reasons := strings.Join(v.Reasons, "; ")
		hint := ""
		for _, h := range s.Hints {
			hint += h.Rule + ": " + h.Message + "\n"
		}
		if tt.serverBound {
			if !c.ServerBound || c.Saturated || !strings.HasPrefix(c.Verdict, "not saturated, the server was") || !strings.Contains(c.Verdict, "20.00 requests/s arrived and 15.00/s completed") {
				t.Errorf("%s: client %+v; want not saturated, server bound", tt.name, c)
			}
			if v.Valid || v.ClientSaturated || !strings.Contains(reasons, "the server held full") || strings.Contains(reasons, "the client or its in-flight cap") {
				t.Errorf("%s: validity %+v; want invalid for the server's saturation", tt.name, v)
			}
			if !strings.Contains(hint, "overload: 20.00 requests/s arrived but only 15.00/s completed, and the in-flight cap stayed full") || strings.Contains(hint, "client_bound") {
				t.Errorf("%s: hints %q; want the overload hint, not client bound", tt.name, hint)
			}
			continue
		}
		if c.ServerBound || !c.Saturated || !v.ClientSaturated || !strings.Contains(reasons, "the client or its in-flight cap") {
			t.Errorf("%s: client %+v, validity %+v; want the client blamed", tt.name, c, v)
		}
	}
}

// TestDiagnoseHostBusyExplainsInvalidSteps: contention plus steps invalid
// for reasons contention explains (the client sent late or less) earns
// the "host busy" warning, counting only those steps; a step invalid only
// for too few samples, or for late starts the server held back, is not
// counted. Contention alone earns only the contention warning. Each step
// is judged by Judge from figures that break exactly one rule.
func TestDiagnoseHostBusyExplainsInvalidSteps(t *testing.T) {
	t.Parallel()
	busy := steady("client", 10, func(int) map[string]float64 {
		return map[string]float64{observe.ClientCPUPct: 20, observe.ClientSchedLagP99: 120}
	})
	judged := func(mode string, achieved float64, e2e, late int64, serverBound bool) record.Step {
		st := record.Step{Kind: record.StepConstant, Mode: mode, Target: 10, WindowS: 60,
			Requests: record.Requests{Succeeded: e2e, Late: late}, Metrics: record.Metrics{E2E: record.Stats{Count: e2e}}}
		st.Validity.AchievedLoad = achieved
		if err := Judge(&st, Criteria{ServerBound: serverBound}); err != nil {
			t.Fatal(err)
		}
		return st
	}
	valid := judged(record.ModeClosed, 10, 600, 0, false)
	short := judged(record.ModeClosed, 10, 20, 0, false)       // 20 < 29 for P90: samples only
	underLoaded := judged(record.ModeClosed, 5, 600, 0, false) // half the users in flight
	lateClient := judged(record.ModeOpen, 10, 600, 120, false) // 20% late, the client's doing
	lateServer := judged(record.ModeOpen, 10, 600, 120, true)  // 20% late behind the server's full cap
	shortAndLate := judged(record.ModeOpen, 10, 20, 10, false) // both: contention may explain it
	for _, tt := range []struct {
		name  string
		steps []record.Step
		want  string // the host-busy warning's head; "" for none
	}{
		{"load short and too few samples", []record.Step{valid, short, underLoaded}, "host busy: 1 of 3 steps were invalid"},
		{"only too few samples", []record.Step{valid, short}, ""},
		{"client late", []record.Step{lateClient, valid}, "host busy: 1 of 2 steps were invalid"},
		{"server held the cap", []record.Step{lateServer, valid}, ""},
		{"short and late", []record.Step{shortAndLate, short}, "host busy: 1 of 2 steps were invalid"},
		{"all valid", []record.Step{valid}, ""},
	} {
		s := &record.Summary{Steps: tt.steps}
		if err := Diagnose(s, Evidence{Samples: busy, Info: record.RunInfo{EndUS: 10e6}}); err != nil {
			t.Fatal(err)
		}
		joined := strings.Join(s.Warnings, "\n")
		if tt.want == "" && strings.Contains(joined, "host busy") || !strings.Contains(joined, tt.want) {
			t.Errorf("%s: warnings %q, want %q", tt.name, s.Warnings, tt.want)
		}
		if !strings.Contains(joined, "the host was busy with other work") {
			t.Errorf("%s: no contention warning in %q", tt.name, s.Warnings)
		}
	}
}

// TestDiagnoseHostBusyExplainsAnInvalidRun: a single-phase run gets the
// "host busy" warning by the staged run's rule: the client's telemetry
// saw contention and JudgeRun made the run invalid for a reason
// contention explains, named in the warning. Too few samples, or late
// starts behind a cap the server held full, are not such reasons; an
// invalid run on a quiet host gets no such warning.
func TestDiagnoseHostBusyExplainsAnInvalidRun(t *testing.T) {
	t.Parallel()
	busy := steady("client", 10, func(int) map[string]float64 {
		return map[string]float64{observe.ClientCPUPct: 20, observe.ClientSchedLagP99: 120}
	})
	quiet := steady("client", 10, func(int) map[string]float64 {
		return map[string]float64{observe.ClientCPUPct: 20, observe.ClientSchedLagP99: 1}
	})
	for _, tt := range []struct {
		name      string
		mode      string
		succeeded int64 // each with an E2E value
		late      int64
		achieved  float64 // of 10 intended
		trend     record.LoadTrend
		samples   []observe.Sample
		want      string // the host-busy warning; "" for none
	}{
		// 120 of 600 started late and the server kept up: the client's doing.
		{"client late", record.ModeOpen, 600, 120, 10, record.LoadTrend{}, busy,
			"host busy: the run was invalid for reasons the host's other work, not the server, may explain (late starts)"},
		// Half the users in flight: load short of the plan.
		{"load short", record.ModeClosed, 600, 0, 5, record.LoadTrend{}, busy,
			"host busy: the run was invalid for reasons the host's other work, not the server, may explain (load short of the plan)"},
		// The same late starts, but 300 of 600 issued never completed: the
		// server held the cap full (server_bound), not the host's doing.
		{"server held the cap", record.ModeOpen, 600, 120, 10, record.LoadTrend{WindowS: 60, Issued: 600, Completed: 300}, busy, ""},
		// 20 successes cannot back the P90 (29): a short run, not a busy host.
		{"too few samples", record.ModeClosed, 20, 0, 10, record.LoadTrend{}, busy, ""},
		// A valid run on a busy host: the contention warning alone.
		{"valid", record.ModeClosed, 600, 0, 10, record.LoadTrend{}, busy, ""},
		// Late starts on a quiet host: no evidence the host was busy.
		{"quiet host", record.ModeOpen, 600, 120, 10, record.LoadTrend{}, quiet, ""},
	} {
		s := &record.Summary{Mode: tt.mode, WindowS: 60, Requests: record.Requests{Succeeded: tt.succeeded, Late: tt.late},
			Metrics: record.Metrics{E2E: record.Stats{Count: tt.succeeded}}, Client: &record.ClientTelemetry{}}
		if tt.mode == record.ModeOpen {
			s.Tally.OpenLoop = tt.succeeded
		}
		ev := Evidence{Samples: tt.samples, Info: record.RunInfo{EndUS: 10e6}, Trend: tt.trend,
			Load: &RunLoad{Intended: 10, Achieved: tt.achieved}}
		if err := Diagnose(s, ev); err != nil {
			t.Fatal(err)
		}
		joined := strings.Join(s.Warnings, "\n")
		if tt.want == "" && strings.Contains(joined, "host busy") || !strings.Contains(joined, tt.want) {
			t.Errorf("%s: warnings %q, want %q", tt.name, s.Warnings, tt.want)
		}
		if tt.name != "valid" && tt.name != "quiet host" && s.Validity.Valid {
			t.Errorf("%s: the run is valid (%q); the row means to plant an invalid one", tt.name, s.Validity.Reasons)
		}
	}
}
