package analyze

import (
	"strings"
	"testing"

	"github.com/inferload/inferload/record"
)

// TestReadLagRule: the read-lag rule on cases whose truth is known by
// construction, both sides of each threshold, through Diagnose so the
// verdict, the warning and validity all follow.
func TestReadLagRule(t *testing.T) {
	t.Parallel()
	kernel := func(n int64, p90, p99 float64) *record.ClientReads {
		return &record.ClientReads{Clock: record.ClockKernel, Kernel: n, ReadLag: record.Stats{Count: n, P90: p90, P99: p99}}
	}
	for _, tt := range []struct {
		name      string
		reads     *record.ClientReads
		itl       float64 // the run's median ITL, ms
		saturated bool
		cite      string // the verdict must contain it
	}{
		// 1,000 streams on 2 cores, tokens 20 ms apart: p90 110 ms at
		// 16% CPU is saturated.
		{"p90 110 ms, ITL 20 ms", kernel(1000, 110, 140), 20, true, "read lag p90 110.0 ms (limit 20.0 ms"},
		// Just over the ITL.
		{"p90 20.1 ms, ITL 20 ms", kernel(100, 20.1, 30), 20, true, "read lag p90 20.1 ms"},
		// At the ITL: each token still read before the next came.
		{"p90 20 ms, ITL 20 ms", kernel(100, 20, 40), 20, false, "read lag p90 20.0 ms, p99 40.0 ms"},
		// 256 streams on a busy host: 15 ms late, tokens 20 ms apart.
		{"p90 15 ms, ITL 20 ms", kernel(3800, 15, 30), 20, false, "read lag p90 15.0 ms"},
		// Tokens 1 ms apart: the 5 ms floor rules; just over it.
		{"p90 5.1 ms, ITL 1 ms", kernel(100, 5.1, 9), 1, true, "limit 5.0 ms"},
		// At the floor: not over it.
		{"p90 5.0 ms, ITL 1 ms", kernel(100, 5.0, 9), 1, false, "read lag p90 5.0 ms"},
		// 16 streams on a quiet host: a tenth of a millisecond.
		{"p90 0.1 ms", kernel(500, 0.1, 0.4), 20, false, "read lag p90 0.1 ms"},
		// 19 requests cannot condemn a run, however late.
		{"19 requests", kernel(19, 50, 60), 20, false, "read lag p90 50.0 ms"},
		// 20 can.
		{"20 requests", kernel(20, 50, 60), 20, true, "read lag p90 50.0 ms"},
		// The user-space clock cannot see the lag: no verdict, and it says so.
		{"user clock", &record.ClientReads{Clock: record.ClockUser, User: 500}, 20, false, "read lag not measured"},
	} {
		s := &record.Summary{Mode: record.ModeClosed, Requests: record.Requests{Succeeded: 1000},
			Metrics:     record.Metrics{E2E: record.Stats{Count: 1000}, ITL: record.Stats{P50: tt.itl}},
			ClientReads: tt.reads,
			Client:      &record.ClientTelemetry{Verdict: "not saturated: CPU max 40%", CPUPctMax: 40}}
		if err := Diagnose(s, Evidence{Load: &RunLoad{Intended: 10, Achieved: 10}}); err != nil {
			t.Fatal(err)
		}
		if s.Client.Saturated != tt.saturated || !strings.Contains(s.Client.Verdict, tt.cite) {
			t.Errorf("%s: saturated %v, verdict %q; want %v citing %q", tt.name, s.Client.Saturated, s.Client.Verdict, tt.saturated, tt.cite)
		}
		if s.Validity.Valid == tt.saturated || s.Validity.ClientSaturated != tt.saturated {
			t.Errorf("%s: validity %+v", tt.name, s.Validity)
		}
		warned := strings.Contains(strings.Join(s.Warnings, "\n"), "load generator was saturated")
		if warned != tt.saturated {
			t.Errorf("%s: warnings %q", tt.name, s.Warnings)
		}
	}
}

// TestReadLagWithoutSelfMonitoring: a late reader is saturated even when
// self-monitoring did not run (no client telemetry).
func TestReadLagWithoutSelfMonitoring(t *testing.T) {
	t.Parallel()
	s := &record.Summary{ClientReads: &record.ClientReads{Clock: record.ClockKernel, Kernel: 50, ReadLag: record.Stats{P90: 12}}}
	if err := Diagnose(s, Evidence{}); err != nil {
		t.Fatal(err)
	}
	if s.Client == nil || !s.Client.Saturated {
		t.Fatalf("client %+v: want saturated", s.Client)
	}
}
