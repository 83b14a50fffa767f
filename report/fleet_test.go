package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/inferload/inferload/record"
)

// TestFleetShowsTheSLOsPercentile: under a "TTFT p90 ≤ 500ms" SLO the
// terminal table's TTFT column is the p90 it judged, not a p99 beside it
// (a p99 of 514 ms next to "met" read as a contradiction).
func TestFleetShowsTheSLOsPercentile(t *testing.T) {
	t.Parallel()
	f := fleetAnswer()
	slo, err := record.ParseSLO("ttft.p90<=500ms")
	if err != nil {
		t.Fatal(err)
	}
	f.SLOs, f.Shown = []string{slo.String()}, record.ShownFor([]record.SLO{slo})
	for i := range f.Probes {
		f.Probes[i].Metrics.TTFT.P90 = 480
	}
	for i := range f.ColdStart.Windows {
		f.ColdStart.Windows[i].TTFT.P90 = 470
	}
	for i := range f.Routers {
		f.Routers[i].Figure = "TTFT p90"
	}
	var b bytes.Buffer
	if err := WriteFleet(&b, f); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	if !strings.Contains(out, "TTFT p90 ms") || strings.Contains(out, "TTFT p99 ms") || !strings.Contains(out, "480") || !strings.Contains(out, "470") {
		t.Errorf("want a TTFT p90 column with 480 ms, no TTFT p99 column:\n%s", out)
	}
	if !strings.Contains(out, "TPOT p99 ms") {
		t.Errorf("a metric no SLO bounds shows its p99:\n%s", out)
	}
}

// TestFleetComparesRouters: the terminal answer lists each router
// compared with its replicas ("none" when no size passed), the first
// SLO's figure at that size and its prefix-cache hit share; an answer
// without a comparison has no such table.
func TestFleetComparesRouters(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	if err := WriteFleet(&b, fleetAnswer()); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{"Routers compared", "TTFT p99 ms", "least-outstanding         3         1500", "session      none         2600", "71.1%", "9.2%"} {
		if !strings.Contains(out, want) {
			t.Errorf("want %q in:\n%s", want, out)
		}
	}
	f := fleetAnswer()
	f.Routers = nil
	b.Reset()
	if err := WriteFleet(&b, f); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "Routers compared") {
		t.Errorf("no comparison asked for, but a table:\n%s", b.String())
	}
}

// TestShownFor: the percentile each column shows, one row per case.
func TestShownFor(t *testing.T) {
	t.Parallel()
	parse := func(s ...string) []record.SLO {
		var out []record.SLO
		for _, v := range s {
			slo, err := record.ParseSLO(v)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, slo)
		}
		return out
	}
	tests := []struct {
		slos []record.SLO
		want record.FleetShown
	}{
		{nil, record.FleetShown{TTFT: "p99", TPOT: "p99", E2E: "p99"}},                                     // no SLO: p99s
		{parse("ttft.p90<=500ms", "e2e.p50<=3s"), record.FleetShown{TTFT: "p90", TPOT: "p99", E2E: "p50"}}, // each metric its own
		{parse("ttft.p95<=1s", "ttft.p99<=2s"), record.FleetShown{TTFT: "p95", TPOT: "p99", E2E: "p99"}},   // the first SLO on a metric
		{[]record.SLO{{TTFTMs: 100, Share: 0.8}}, record.FleetShown{TTFT: "p99", TPOT: "p99", E2E: "p99"}}, // a share reports do not show: p99
	}
	for _, tt := range tests {
		if got := record.ShownFor(tt.slos); got != tt.want {
			t.Errorf("ShownFor(%v) = %+v, want %+v", tt.slos, got, tt.want)
		}
	}
}
