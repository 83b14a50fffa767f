package report

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/inferload/inferload/record"

	"github.com/inferload/inferload/internal/browsertest"
)

// fleetAnswer is a planted fleet answer: three sizes, a scale-out, and a
// reason carrying markup that must stay text.
func fleetAnswer() *record.Fleet {
	probe := func(n int, passed bool, ttft float64) record.FleetProbe {
		p := record.FleetProbe{Replicas: n, Passed: passed, Reasons: []string{"TTFT p99 ≤ 2s: <b>why</b>"}, FailureRate: 0.001,
			Utilisation: 0.8, MaxUtilisation: 0.9}
		p.Metrics.TTFT.P99, p.Metrics.TPOT.P99, p.Metrics.E2E.P99 = ttft, 40, ttft*5
		p.Throughput.RequestsPerS, p.Throughput.OutputTokensPerS = float64(n)*4, float64(n)*1000
		return p
	}
	return &record.Fleet{Profile: "a100-7b", Router: "least-outstanding", Mode: record.ModeClosed, Peak: 100, Headroom: 0.2, Load: 120,
		SLOs: []string{"TTFT p99 ≤ 2s"}, Confidence: 0.95, MaxFailureRate: 0.01, WarmupS: 60, WindowS: 600, PerReplica: 50,
		Replicas: 3, Reason: `3 replicas meet every SLO at 120 users; 2 do not: "><img src=x onerror="window.pwned=1">`,
		Probes:       []record.FleetProbe{probe(2, false, 2600), probe(3, true, 1500), probe(4, true, 1200)},
		PricePerHour: 2, CostPerHour: 6, CostPerMillionTokens: 0.5,
		Routers: []record.FleetRouter{{Router: "least-outstanding", Replicas: 3, Reason: "3 replicas meet", Figure: "TTFT p99", FigureMS: 1500, PrefixHitShare: 0.092},
			{Router: "session", Replicas: 0, Reason: `none: <b>why</b>`, Figure: "TTFT p99", FigureMS: 2600, PrefixHitShare: 0.711}},
		ColdStart: &record.FleetColdStart{From: 1, To: 3, ColdStartS: 90, RampS: 60, JudgedS: 150, Reasons: []string{"missed"},
			Windows: []record.FleetWindow{{StartS: 60, Replicas: 1, Requests: 100, MetShare: 0.4, TTFT: record.Stats{P99: 9000}},
				{StartS: 90, Replicas: 1, Requests: 120, MetShare: 0.1, TTFT: record.Stats{P99: 20000}},
				{StartS: 150, Replicas: 3, Requests: 130, MetShare: 0.97, TTFT: record.Stats{P99: 1500}}}}}
}

// TestFleetHTMLInBrowser opens the fleet page in headless chromium: the
// replica curve, the busy share and the scale-out are drawn, the planted
// markup stays text, and the console is clean.
func TestFleetHTMLInBrowser(t *testing.T) {
	dir := browsertest.ArtifactDir(t)
	var b bytes.Buffer
	if err := WriteFleetHTML(&b, fleetAnswer()); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "3 replicas meet every SLO") {
		t.Error("the page does not state the answer's reason")
	}
	if !strings.Contains(b.String(), "Routers compared") || !strings.Contains(b.String(), "71.1%") {
		t.Error("the page does not compare the routers")
	}
	path := filepath.Join(dir, "fleet.html")
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, console := openPage(t, path)
	charts, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](drawnCharts))
	if err != nil {
		t.Fatal(err)
	}
	if len(charts) != 3 {
		t.Errorf("page has %d charts, want 3: %v", len(charts), charts)
	}
	expectDrawn(t, charts, "fleet-latency", "fleet-load", "fleet-coldstart")
	pwned, err := chromedp.Run(ctx, chromedp.Evaluate[bool]("window.pwned !== undefined || document.querySelector('main img, main b') !== null"))
	if err != nil || pwned {
		t.Errorf("planted markup ran or became an element (pwned=%v, err=%v)", pwned, err)
	}
	finishPage(t, ctx, console, dir, "fleet.png")
}
