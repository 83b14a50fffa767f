package experiment

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/inferload/inferload/internal/enginetest"
	"github.com/inferload/inferload/observe"
	"github.com/inferload/inferload/record"
	"github.com/inferload/inferload/rundir"
	"github.com/inferload/inferload/sim"
	"github.com/inferload/inferload/summary"
)

// TestRunObservesSimulator: a real run against the simulator scrapes its
// /metrics (vLLM and DCGM names) on the run clock, survives a dead second
// endpoint with marked gaps, fills env.json and the summary's server and
// client sections, and a rebuild reproduces summary.json byte for byte.
func TestRunObservesSimulator(t *testing.T) {
	t.Parallel()
	url := tinySim(t, sim.Faults{})
	metricsURL := strings.TrimSuffix(url, "/v1") + "/metrics"
	p := testPlan(t, fmt.Sprintf(`
target: {url: %s, model: %s}
load: {concurrency: 8, duration: 3s}
workload: {input_tokens: "32", output_tokens: "32"}
observe: {scrape: "%s,http://127.0.0.1:1/metrics", interval: 250ms, gpu: false, notes: {"1s": "planned note"}}
env: {framework: inferload-sim}
`, url, enginetest.TinyProfile(t).Model, metricsURL))
	res, err := Run(context.Background(), p, Options{})
	if err != nil {
		t.Fatal(err)
	}
	samples, err := summary.ReadTelemetry(res.Dir)
	if err != nil {
		t.Fatal(err)
	}
	checkSimSamples(t, samples, metricsURL, res.Summary.WindowS)
	checkSimEnv(t, res.Dir, enginetest.TinyProfile(t).Model)
	checkSimEvents(t, res.Dir)

	s := res.Summary
	kinds := map[string]string{}
	for _, src := range s.Server.Sources {
		kinds[src.Source] = src.Kind
	}
	if kinds[metricsURL] != "vllm+dcgm" || len(kinds) != 2 || s.Client == nil || s.Client.RSSMaxMiB <= 0 {
		t.Fatalf("server %+v client %+v", s.Server, s.Client)
	}
	before, err := os.ReadFile(filepath.Join(res.Dir, rundir.Summary))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := summary.Rebuild(res.Dir); err != nil {
		t.Fatal(err)
	}
	after, err := os.ReadFile(filepath.Join(res.Dir, rundir.Summary))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(before, after) {
		t.Errorf("rebuilt summary.json differs:\n%s\nvs\n%s", before, after)
	}
}

// checkSimSamples: the simulator's vLLM and DCGM series arrive, keyed to
// run seconds, and the dead endpoint yields gaps only. How many scrapes
// a run gets is the sampler's ticks over the window the run measured
// (windowS), and a busy host may delay ticks and time out the live
// simulator's scrapes: each source must answer at least half the ticks
// (with data or a gap), and the simulator with data at least twice (a
// rate needs two).
func checkSimSamples(t *testing.T, samples []observe.Sample, metricsURL string, windowS float64) {
	t.Helper()
	seen := map[string]bool{}
	var gaps, data, simGaps int
	for _, s := range samples {
		switch {
		case s.Source == metricsURL && !s.Gap:
			data++
			for k := range s.Values {
				seen[k] = true
			}
		case s.Source == metricsURL:
			simGaps++
		case strings.Contains(s.Source, "127.0.0.1:1/"):
			if !s.Gap || s.Error == "" {
				t.Errorf("dead endpoint sample without a gap: %+v", s)
			}
			gaps++
		}
		if s.TS != s.TimeUS/1e6 {
			t.Errorf("sample keyed to second %d but taken at %d µs", s.TS, s.TimeUS)
		}
	}
	for _, k := range []string{observe.QueueDepth, observe.RunningBatch, observe.KVCacheUsage, observe.GPUUtil,
		observe.GPUMemUsedFrac, observe.OutputTokensPerS, observe.ServerTTFT + "_p50_ms"} {
		if !seen[k] {
			t.Errorf("no sample of the simulator carries %s (seen %v)", k, seen)
		}
	}
	ticks := int(windowS / 0.25)
	if data < 2 || data+simGaps < ticks/2 || gaps < ticks/2 {
		t.Errorf("simulator: %d data samples, %d gaps; dead endpoint: %d gaps; want each at least %d (half the %d ticks of %.2f s at 250 ms), 2 with data",
			data, simGaps, gaps, ticks/2, ticks, windowS)
	}
}

func checkSimEnv(t *testing.T, dir, model string) {
	t.Helper()
	env := readEnv(t, dir)
	served := env.Target.Served
	if len(served.Models) == 0 || served.Models[0].ID != model || env.Declared["framework"] != "inferload-sim" ||
		env.GPUs.Backend != "none" || len(env.ServerGPUs) == 0 || env.ServerGPUs[0].Name == "" {
		t.Errorf("env.json = %+v", env)
	}
}

// checkSimEvents: the planned note is there, and so is the dead
// endpoint's scrape gap. Every message of a kind is kept: on a busy
// machine the live simulator's scrape can time out too, a gap of its own
// that must not hide the dead endpoint's.
func checkSimEvents(t *testing.T, dir string) {
	t.Helper()
	kinds := map[record.EventKind][]string{}
	if _, err := rundir.ReadEvents(filepath.Join(dir, rundir.Events), func(e *record.Event) error {
		kinds[e.Kind] = append(kinds[e.Kind], e.Message)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	deadGap := slices.ContainsFunc(kinds[observe.EventScrapeGap], func(m string) bool { return strings.Contains(m, "127.0.0.1:1/") })
	if !slices.Contains(kinds[record.EventNote], "planned note") || !deadGap {
		t.Errorf("events = %v; want the planned note and a scrape gap of 127.0.0.1:1", kinds)
	}
}

// TestRunRejectsUnknownServerKind before anything is written.
func TestRunRejectsUnknownServerKind(t *testing.T) {
	t.Parallel()
	p := testPlan(t, "target: {url: http://127.0.0.1:1/v1}\nload: {concurrency: 1}\nobserve: {server: vlm}\n")
	_, err := Run(context.Background(), p, Options{})
	if err == nil || !strings.Contains(err.Error(), "observe.server") {
		t.Fatalf("err = %v", err)
	}
	if entries, _ := os.ReadDir(p.Output.Dir); len(entries) != 0 {
		t.Errorf("run directory written for a bad plan: %v", entries)
	}
}
