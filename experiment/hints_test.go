package experiment

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/inferload/inferload/record"
	"github.com/inferload/inferload/report"
	"github.com/inferload/inferload/rundir"
	"github.com/inferload/inferload/sim"
)

// hintCase is one planted situation: a simulator profile, the load that
// drives it there, and the one hint that must fire.
type hintCase struct {
	name    string
	profile func(*sim.Profile)
	load    string
	want    []string
}

// TestHintsOnSimulator runs real, short runs against simulator profiles
// built to be compute bound, memory bound or healthy, and a client that is
// starved of CPU, and checks that exactly the right hint fires, citing
// figures, and that the healthy run gets none. It does not call
// t.Parallel: the client figures are this test process's own, so other
// tests' load in the same process would make any client saturated.
func TestHintsOnSimulator(t *testing.T) {
	server := []hintCase{
		// Step time grows with the batch (1 ms per sequence) and twice as
		// many users as batch slots keep it full: the GPU is busy all the
		// time and output throughput cannot grow. Three measured seconds
		// (12 samples) so one slow 250 ms window on a busy host cannot
		// tip the halves past the ±10% "flat" band.
		{"compute_bound", func(p *sim.Profile) {
			p.MaxNumSeqs = 8
			p.Cost.DecodePerSeq = time.Millisecond
		}, `load: {concurrency: 16, duration: 3500ms, warmup: 500ms}
workload: {input_tokens: "32", output_tokens: "32"}`, []string{"compute_bound"}},
		// 48 KV blocks (768 tokens) for eight 256-token sequences: the
		// cache fills and the scheduler preempts.
		{"memory_bound", func(p *sim.Profile) {
			p.NumGPUBlocks = 48
			p.MaxModelLen = 512
			p.Cost.StepOverhead = 4 * time.Millisecond
		}, `load: {concurrency: 8, duration: 2500ms, warmup: 500ms}
workload: {input_tokens: "64", output_tokens: "192"}`, []string{"memory_bound"}},
		// Four short requests a second keep the GPU mostly idle, the queue
		// empty and the KV cache nearly free.
		{"healthy", func(*sim.Profile) {}, `load: {rate: 4, arrival: constant, duration: 2500ms, warmup: 500ms}
workload: {input_tokens: "32", output_tokens: "16"}`, nil},
	}
	t.Run("server", func(t *testing.T) {
		for _, tc := range server {
			t.Run(tc.name, func(t *testing.T) {
				t.Parallel()
				s, dir := runHintCase(t, tc)
				checkHints(t, s, tc.want)
				checkHintReport(t, s, dir)
			})
		}
	})
	// The client case runs alone, after the others: it burns every CPU
	// of this process, which would starve their clients too. Five
	// measured seconds leave room for a break in the 3 s the verdict
	// needs when the host is busy.
	t.Run("client_bound", func(t *testing.T) {
		stop := burnCPU(4 * runtime.GOMAXPROCS(0))
		s, _ := runHintCase(t, hintCase{name: "client_bound", profile: func(*sim.Profile) {},
			load: `load: {rate: 1, arrival: constant, duration: 5500ms, warmup: 500ms}
workload: {input_tokens: "16", output_tokens: "4"}`})
		stop()
		checkHints(t, s, []string{"client_bound"})
		if s.Client == nil || !s.Client.Saturated || !slices.ContainsFunc(s.Warnings, func(w string) bool {
			return strings.Contains(w, "results may be invalid")
		}) {
			t.Errorf("client %+v, warnings %q: want a saturated client and an invalid-results warning", s.Client, s.Warnings)
		}
	})
}

// runHintCase starts the case's simulator and runs its plan against it,
// scraping /metrics four times a second.
func runHintCase(t *testing.T, tc hintCase) (*record.Summary, string) {
	t.Helper()
	prof, err := sim.LookupProfile("tiny")
	if err != nil {
		t.Fatal(err)
	}
	tc.profile(&prof)
	if err := prof.Validate(); err != nil {
		t.Fatal(err)
	}
	srv, url, err := sim.Start(sim.Config{Profile: prof, Seed: 1}, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	p := testPlan(t, fmt.Sprintf("target: {url: %s, model: %s}\nobserve: {interval: 250ms, gpu: false}\n%s\n", url, prof.Model, tc.load))
	res, err := Run(context.Background(), p, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return res.Summary, res.Dir
}

// checkHintReport draws report.html from the run's summary and
// telemetry.jsonl: the server timelines are there and the diagnosis
// names the hint (or says none fired).
func checkHintReport(t *testing.T, s *record.Summary, dir string) {
	t.Helper()
	samples, err := rundir.ReadTelemetry(filepath.Join(dir, rundir.Telemetry))
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := report.WriteHTML(&b, &report.HTMLInput{Summary: s, Telemetry: samples}); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	want := []string{`<section id="diagnosis">`, `-queue"`, `-gpu"`, "load generator not saturated"}
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

// checkHints wants exactly the named rules, each citing figures.
func checkHints(t *testing.T, s *record.Summary, want []string) {
	t.Helper()
	var got []string
	if s.Client != nil {
		t.Logf("client: %s", s.Client.Verdict)
	}
	for _, h := range s.Hints {
		t.Logf("hint: %s", h.Message)
		got = append(got, h.Rule)
		if len(h.Figures) == 0 || h.Message == "" {
			t.Errorf("hint %s cites no figures: %+v", h.Rule, h)
		}
	}
	if !slices.Equal(got, want) {
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
