package experiment

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/inferload/inferload/analyze"
	"github.com/inferload/inferload/internal/enginetest"
	"github.com/inferload/inferload/observe"
	"github.com/inferload/inferload/record"
	"github.com/inferload/inferload/report"
	"github.com/inferload/inferload/rundir"
	"github.com/inferload/inferload/sim"
	"github.com/inferload/inferload/summary"
)

// hintCase is one planted situation: a simulator profile, the load that
// drives it there, the regime its telemetry must show for the planted
// cause to be there at all, and the hints that must then fire.
type hintCase struct {
	name    string
	profile func(*sim.Profile)
	load    string
	// inRegime says whether what the run recorded is the planted
	// situation; a busy host can take a run out of it (a GC pause makes
	// "flat" throughput uneven), and then the hints are reported, not
	// asserted.
	inRegime func(seen) bool
	want     []string
}

// TestHintsOnSimulator runs real, short runs against simulator profiles
// built to be compute bound, memory bound or healthy, and a client that is
// starved of CPU. What cannot depend on the host's speed is asserted every
// time: telemetry was collected, the report has its diagnosis, and the
// hints recomputed from telemetry.jsonl are summary.json's. A rule is
// asserted only when the recorded figures are in the regime the case
// planted; the rules' own truth tables are analyze's TestHintRules. It
// does not call t.Parallel: the client figures are this test process's
// own, so other tests' load in the same process would make any client
// saturated.
func TestHintsOnSimulator(t *testing.T) {
	server := []hintCase{
		// Step time grows with the batch (1 ms per sequence) and twice as
		// many users as batch slots keep it full: the GPU is busy all the
		// time and output throughput cannot grow.
		{"compute_bound", func(p *sim.Profile) {
			p.MaxNumSeqs = 8
			p.Cost.DecodePerSeq = time.Millisecond
		}, `load: {concurrency: 16, duration: 3500ms, warmup: 500ms}
workload: {input_tokens: "32", output_tokens: "32"}`,
			func(w seen) bool { return !w.saturated && w.busy() && w.flat() && !w.kvPressure() },
			[]string{"compute_bound"}},
		// 48 KV blocks (768 tokens) for eight 256-token sequences: the
		// cache fills and the scheduler preempts.
		{"memory_bound", func(p *sim.Profile) {
			p.NumGPUBlocks = 48
			p.MaxModelLen = 512
			p.Cost.StepOverhead = 4 * time.Millisecond
		}, `load: {concurrency: 8, duration: 2500ms, warmup: 500ms}
workload: {input_tokens: "64", output_tokens: "192"}`,
			func(w seen) bool { return !w.saturated && w.kvPressure() && !w.queueGrowing() },
			[]string{"memory_bound"}},
		// Four short requests a second keep the GPU mostly idle, the queue
		// empty and the KV cache nearly free.
		{"healthy", func(*sim.Profile) {}, `load: {rate: 4, arrival: constant, duration: 2500ms, warmup: 500ms}
workload: {input_tokens: "32", output_tokens: "16"}`,
			func(w seen) bool { return !w.saturated && !w.busy() && !w.kvPressure() && !w.queueGrowing() },
			nil},
		// One user keeps the GPU busy and throughput flat, but nothing
		// waits: below saturation (4 users give 3.4× the throughput), so
		// no hint — the old compute_bound rule fired here.
		{"one_user", func(*sim.Profile) {}, `load: {concurrency: 1, duration: 2500ms, warmup: 500ms}
workload: {input_tokens: "32", output_tokens: "32"}`,
			func(w seen) bool { return !w.saturated && !w.kvPressure() },
			nil},
	}
	t.Run("server", func(t *testing.T) {
		for _, tc := range server {
			t.Run(tc.name, func(t *testing.T) {
				t.Parallel()
				s, dir := runHintCase(t, tc)
				w := checkTelemetry(t, s, dir, serverSeries...)
				checkHintsFromTelemetry(t, dir)
				checkHintReport(t, s, dir)
				if !tc.inRegime(w) {
					t.Logf("not in the planted regime, hints not asserted (host noise?): %s; hints %v", w, rules(s))
					return
				}
				checkHints(t, s, tc.want)
			})
		}
	})
	// Open loop at about three times what the compute-bound profile
	// serves: arrivals outrun completions and the backlog grows, which
	// the overload hint must name from the records alone (the compute
	// and scheduler hints may fire beside it, host permitting).
	t.Run("overload", func(t *testing.T) {
		s, dir := runHintCase(t, hintCase{name: "overload", profile: func(p *sim.Profile) {
			p.MaxNumSeqs = 8
			p.Cost.DecodePerSeq = time.Millisecond
		}, load: `load: {rate: 80, arrival: constant, duration: 3500ms, warmup: 500ms}
workload: {input_tokens: "32", output_tokens: "32"}`})
		checkTelemetry(t, s, dir)
		checkHintsFromTelemetry(t, dir)
		// Asserted whatever the client verdict: 80 arrivals a second
		// against about 28 served is a backlog on any host.
		if !slices.Contains(rules(s), "overload") {
			t.Errorf("hints %v, want overload; hints %+v", rules(s), s.Hints)
		}
	})
	// The client case runs alone, after the others: it burns every CPU
	// of this process, which would starve their clients too. Five
	// measured seconds leave room for a break in the 3 s the verdict
	// needs when the host is busy.
	t.Run("client_bound", func(t *testing.T) {
		stop := burnCPU(4 * runtime.GOMAXPROCS(0))
		s, dir := runHintCase(t, hintCase{name: "client_bound", profile: func(*sim.Profile) {},
			load: `load: {rate: 1, arrival: constant, duration: 5500ms, warmup: 500ms}
workload: {input_tokens: "16", output_tokens: "4"}`})
		stop()
		// The burn starves the in-process simulator's scrapes too: only
		// the client's own samples are sure to be there.
		w := checkTelemetry(t, s, dir)
		checkHintsFromTelemetry(t, dir)
		if !w.saturated {
			t.Logf("the burn did not saturate the client, client_bound not asserted: %s", s.Client.Verdict)
			return
		}
		if !slices.Contains(rules(s), "client_bound") || !slices.ContainsFunc(s.Warnings, func(w string) bool {
			return strings.Contains(w, "results may be invalid")
		}) || s.Validity == nil || s.Validity.Valid {
			t.Errorf("client %+v, hints %v, warnings %q, validity %+v: want client_bound, an invalid-results warning and an invalid run",
				s.Client, rules(s), s.Warnings, s.Validity)
		}
	})
}

// seen is what a run's measured telemetry showed, pooled over the server
// and GPU sources as the hint rules pool it.
type seen struct {
	util, kvMax, preemptMax float64
	tokA, tokB              float64
	queueA, queueB          float64
	utilN                   int
	tokOK, queueOK          bool
	saturated               bool
}

// busy: the GPU's mean utilisation is compute-bound high.
func (w seen) busy() bool { return w.utilN > 0 && w.util >= analyze.ComputeBoundUtilPct }

// flat: output throughput did not grow or fall between the halves.
func (w seen) flat() bool {
	return w.tokOK && w.tokA > 0 && math.Abs(w.tokB/w.tokA-1) <= analyze.FlatTolerance
}

// kvPressure: the KV cache filled and the server preempted.
func (w seen) kvPressure() bool { return w.kvMax >= analyze.MemoryBoundKV && w.preemptMax > 0 }

// queueGrowing: the waiting queue grew past noise.
func (w seen) queueGrowing() bool {
	return w.queueOK && w.queueB >= analyze.QueueGrowthMin && w.queueB >= w.queueA*analyze.QueueGrowthFactor
}

func (w seen) String() string {
	return fmt.Sprintf("gpu util mean %.1f%% (%d samples), output tok/s %.0f then %.0f, kv max %.2f, preemptions/s max %.1f, queue %.1f then %.1f, client saturated %v",
		w.util, w.utilN, w.tokA, w.tokB, w.kvMax, w.preemptMax, w.queueA, w.queueB, w.saturated)
}

// runHintCase starts the case's simulator and runs its plan against it,
// scraping /metrics four times a second.
func runHintCase(t *testing.T, tc hintCase) (*record.Summary, string) {
	t.Helper()
	prof := enginetest.TinyProfile(t)
	tc.profile(&prof)
	if err := prof.Validate(); err != nil {
		t.Fatal(err)
	}
	_, url := enginetest.StartSim(t, sim.Config{Profile: prof, Seed: 1})
	p := testPlan(t, fmt.Sprintf("target: {url: %s, model: %s}\nobserve: {interval: 250ms, gpu: false}\n%s\n", url, prof.Model, tc.load))
	res, err := Run(context.Background(), p, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return res.Summary, res.Dir
}

// measuredTelemetry reads the run's telemetry.jsonl and its clock marks,
// and keeps the measured window's samples.
func measuredTelemetry(t *testing.T, dir string) (all, measured []observe.Sample, info record.RunInfo) {
	t.Helper()
	all, err := summary.ReadTelemetry(dir)
	if err != nil {
		t.Fatal(err)
	}
	p, err := summary.ReadPlan(dir)
	if err != nil {
		t.Fatal(err)
	}
	if info, err = summary.RunInfo(dir, p); err != nil {
		t.Fatal(err)
	}
	return all, observe.Measured(all, info), info
}

// serverSeries are the series the server rules read.
var serverSeries = []string{observe.GPUUtil, observe.KVCacheUsage, observe.PreemptionsPerS, observe.OutputTokensPerS, observe.QueueDepth}

// checkTelemetry wants the server and the client observed through the
// measured window, with at least 4 samples (what a half-split needs) of
// the client's CPU and of each named server series, and returns what
// they showed.
func checkTelemetry(t *testing.T, s *record.Summary, dir string, series ...string) seen {
	t.Helper()
	if s.Server == nil || len(s.Server.Sources) == 0 || s.Client == nil {
		t.Fatalf("server %+v, client %+v: want both observed", s.Server, s.Client)
	}
	_, measured, _ := measuredTelemetry(t, dir)
	var server, client []observe.Sample
	for _, smp := range measured {
		if smp.Source == "client" {
			client = append(client, smp)
		} else {
			server = append(server, smp)
		}
	}
	if _, _, n := observe.Stat(client, observe.ClientCPUPct); n < 4 {
		t.Errorf("%d measured client samples of %s, want at least 4", n, observe.ClientCPUPct)
	}
	w := seen{saturated: s.Client.Saturated}
	w.util, _, w.utilN = observe.Stat(server, observe.GPUUtil)
	_, w.kvMax, _ = observe.Stat(server, observe.KVCacheUsage)
	_, w.preemptMax, _ = observe.Stat(server, observe.PreemptionsPerS)
	w.tokA, w.tokB, w.tokOK = analyze.Halves(server, observe.OutputTokensPerS)
	w.queueA, w.queueB, w.queueOK = analyze.Halves(server, observe.QueueDepth)
	for _, name := range series {
		if _, _, n := observe.Stat(server, name); n < 4 {
			t.Errorf("%d measured samples of %s, want at least 4", n, name)
		}
	}
	return w
}

// checkHintsFromTelemetry: the hints summary.json holds are the ones the
// rules give on the recorded telemetry.jsonl, with the client verdict
// summarised afresh from it, figure for figure.
func checkHintsFromTelemetry(t *testing.T, dir string) {
	t.Helper()
	written, err := rundir.ReadSummary(filepath.Join(dir, rundir.Summary))
	if err != nil {
		t.Fatal(err)
	}
	all, _, info := measuredTelemetry(t, dir)
	again := *written
	again.Server, again.Client = nil, nil
	observe.Summarize(all, info, &again)
	// The overload rule, and whether late starts were the server's
	// (client.server_bound), read the records' load trend: it is
	// measured afresh from records.jsonl too.
	agg := record.NewAggregate()
	if _, err := rundir.ReadRecords(rundir.RecordsFile(dir), func(r *record.Result) error { agg.Add(r); return nil }); err != nil {
		t.Fatal(err)
	}
	want := written.Hints
	// Diagnose, not Hints alone: the client verdict also reads the
	// records' late starts (written.Requests), as the live run's did.
	if err := analyze.Diagnose(&again, analyze.Evidence{Samples: all, Info: info, Trend: agg.LoadTrend(info)}); err != nil {
		t.Fatal(err)
	}
	if got := again.Hints; !reflect.DeepEqual(got, want) {
		t.Errorf("hints from telemetry.jsonl = %+v, summary.json has %+v", got, written.Hints)
	}
}

// checkHintReport draws report.html from the run's summary and
// telemetry.jsonl: the server timelines are there and the diagnosis gives
// the client verdict and names each hint (or says none fired).
func checkHintReport(t *testing.T, s *record.Summary, dir string) {
	t.Helper()
	samples, err := summary.ReadTelemetry(dir)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := report.WriteHTML(&b, &report.HTMLInput{Summary: s, Telemetry: samples}); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	want := []string{`<section id="diagnosis">`, `-queue"`, `-gpu"`, "load generator not saturated"}
	if s.Client.Saturated {
		want[3] = "CLIENT SATURATED"
	}
	for _, h := range s.Hints {
		want = append(want, h.Rule)
	}
	if len(s.Hints) == 0 {
		want = append(want, "No bottleneck hint fired")
	}
	for _, w := range want {
		if !strings.Contains(page, w) {
			t.Errorf("report lacks %q", w)
		}
	}
}

// rules are the names of the hints that fired, in order.
func rules(s *record.Summary) []string {
	var got []string
	for _, h := range s.Hints {
		got = append(got, h.Rule)
	}
	return got
}

// checkHints wants exactly the named rules, each citing figures.
func checkHints(t *testing.T, s *record.Summary, want []string) {
	t.Helper()
	if s.Client != nil {
		t.Logf("client: %s", s.Client.Verdict)
	}
	for _, h := range s.Hints {
		t.Logf("hint: %s", h.Message)
		if len(h.Figures) == 0 || h.Message == "" {
			t.Errorf("hint %s cites no figures: %+v", h.Rule, h)
		}
	}
	if got := rules(s); !slices.Equal(got, want) {
		t.Errorf("hints = %v, want %v\nhints: %+v\nserver: %+v\nclient: %+v", got, want, s.Hints, s.Server, s.Client)
	}
}

// burnCPU keeps n goroutines spinning until the returned stop is called,
// the planted cause of a client-bound run: the load generator's process
// has no CPU to spare.
func burnCPU(n int) (stop func()) {
	done := make(chan struct{})
	finished := make(chan struct{}, n)
	for range n {
		go func() {
			defer func() { finished <- struct{}{} }()
			x := 0
			for {
				select {
				case <-done:
					return
				default:
				}
				for i := range 10000 {
					x += i
				}
			}
		}()
	}
	return func() {
		close(done)
		for range n {
			<-finished
		}
	}
}
