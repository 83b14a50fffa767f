package report

import (
	"strings"
	"testing"

	"github.com/inferload/inferload/observe"
	"github.com/inferload/inferload/record"
)

const fullScrape = "http://127.0.0.1:8000/metrics"

// fullTelemetry is two minutes of a vLLM + DCGM scrape with a five-second
// gap at 50 s, and the client's own samples.
func fullTelemetry() []observe.Sample {
	var out []observe.Sample
	for sec := range int64(120) {
		at := sec*1e6 + 5e5
		srv := observe.Sample{TS: sec, TimeUS: at, Source: fullScrape, Kind: "vllm+dcgm", LatencyMS: 3}
		if sec >= 50 && sec < 55 {
			srv.Gap, srv.Error = true, "timeout"
		} else {
			f := float64(sec)
			srv.Values = map[string]float64{observe.QueueDepth: f / 10, observe.RunningBatch: 64, observe.KVCacheUsage: 0.5 + f/300,
				observe.PreemptionsPerS: float64(sec % 7), observe.ServerTTFT + "_p99_ms": 200 + f, observe.ServerTTFT + "_p50_ms": 90,
				observe.ServerITL + "_p99_ms": 30, observe.GPUUtil: 95, observe.GPUMemUsedFrac: 0.93, observe.GPUPowerW: 650}
		}
		cli := observe.Sample{TS: sec, TimeUS: at + 1000, Source: "client", Kind: "self", Values: map[string]float64{
			observe.ClientCPUPct: 40 + float64(sec%50), observe.ClientSchedLagP99: 2, observe.ClientRSSMiB: 80, observe.ClientGoroutines: 200}}
		out = append(out, srv, cli)
	}
	return out
}

// TestHTMLTelemetry: the server, GPU and client timelines come from the
// samples, a scrape gap is a break in the lines, the diagnosis says the
// client was saturated and lists the hint, and env.json's GPUs and
// declared fields are tables.
func TestHTMLTelemetry(t *testing.T) {
	t.Parallel()
	in := fullInput()
	p := buildPage(in)
	charts := map[string]chart{}
	for _, c := range p.Data.Charts {
		charts[c.ID] = c
	}
	for _, id := range []string{"tel-0-queue", "tel-0-preempt", "tel-0-srvlat", "tel-0-gpu", "tel-1-cpu", "tel-1-mem"} {
		c, ok := charts[id]
		if !ok {
			t.Errorf("no chart %s (have %d charts)", id, len(charts))
			continue
		}
		if len(c.X) != 120 || len(c.Series) == 0 {
			t.Errorf("chart %s: %d points, %d series; want 120 points", id, len(c.X), len(c.Series))
		}
	}
	queue := charts["tel-0-queue"].Series[0]
	if queue.Values[50] != nil || queue.Values[49] == nil || *queue.Values[49] != 4.9 {
		t.Errorf("queue line: second 49 = %v, 50 = %v; want 4.9 then a gap", queue.Values[49], queue.Values[50])
	}
	if kv := charts["tel-0-queue"].Series[2]; !kv.Right || *kv.Values[0] != 50 {
		t.Errorf("KV cache line = %+v; want percent on the right axis", kv)
	}
	page := render(t, in)
	for _, want := range []string{"CLIENT SATURATED: results may be invalid", "memory_bound", "kv_cache_usage_max = 0.97",
		"NVIDIA H200", "570.86", "local (nvml)", "server (DCGM)", "vllm 0.6.3", "served.models.0.id", "scrape latency max (ms)"} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	if d := strings.Index(page, `<section id="diagnosis">`); d < 0 || d > strings.Index(page, `<section id="headline">`) {
		t.Errorf("the diagnosis is not the first section")
	}
}

// TestHTMLTelemetryQuiet: a client that kept up says so, a run without
// hints says none fired, and no telemetry means no timeline sections.
func TestHTMLTelemetryQuiet(t *testing.T) {
	t.Parallel()
	s := &record.Summary{SchemaVersion: 1, Name: "quiet", Client: &record.ClientTelemetry{Verdict: "not saturated: CPU max 20%"}}
	page := render(t, &HTMLInput{Summary: s})
	for _, want := range []string{"load generator not saturated", "No bottleneck hint fired"} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	for _, absent := range []string{`<section id="server">`, `<section id="client">`, "CLIENT SATURATED"} {
		if strings.Contains(page, absent) {
			t.Errorf("page has %q without the data for it", absent)
		}
	}
}

// TestFoldTelemetry: a day of samples folds to at most maxPoints points,
// keeping a p99 spike and averaging gauges; an all-gap group is a gap.
func TestFoldTelemetry(t *testing.T) {
	t.Parallel()
	tests := []struct {
		n, wantPoints int
	}{
		{n: 10, wantPoints: 10},      // short run: one sample per point
		{n: 86400, wantPoints: 1200}, // a day at 1 s: 72 samples per point
	}
	for _, tt := range tests {
		samples := make([]observe.Sample, tt.n)
		for i := range samples {
			samples[i] = observe.Sample{TimeUS: int64(i) * 1e6, Values: map[string]float64{"x_p99_ms": 10, "q": 2}}
		}
		samples[tt.n/2].Values["x_p99_ms"] = 900
		groups := foldSamples(samples, maxPoints)
		if len(groups) != tt.wantPoints {
			t.Errorf("%d samples: %d points, want %d", tt.n, len(groups), tt.wantPoints)
		}
		var spike float64
		for _, g := range groups {
			spike = max(spike, *foldValue(g, "x_p99_ms", 1))
			if q := *foldValue(g, "q", 1); q != 2 {
				t.Errorf("gauge folded to %v, want its mean 2", q)
			}
		}
		if spike != 900 {
			t.Errorf("%d samples: p99 spike folded to %v, want 900", tt.n, spike)
		}
	}
	if v := foldValue([]observe.Sample{{Gap: true}}, "q", 1); v != nil {
		t.Errorf("an all-gap group = %v, want a gap", *v)
	}
}
