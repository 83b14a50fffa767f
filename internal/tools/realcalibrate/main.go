// Command realcalibrate checks `inferload calibrate` on real engines:
// for each llama.cpp server configuration it starts llama-server on
// loopback (internal/enginetest), sweeps closed-loop levels below and
// above its slot count, fits a profile to three of them and predicts the
// others, and prints a Markdown table of the held-out errors beside the
// host's own noise. TRUTH.md's "Calibrate on real engines" was made by
// it. It needs `make engines` and the wide model
// (MODELS=wide ./scripts/llamacpp-model.sh).
//
//	go run ./internal/tools/realcalibrate [-configs tiny/1/12s,wide/8/40s] [-keep DIR] [-from DIR] [-base cpu-small]
//
// -keep writes each configuration's sweep under DIR/<model>-<slots>;
// -from fits the sweeps a previous -keep wrote, without starting a
// server (to rework the fit on the same measurements). Per level, the
// fitted figures and what calibrate learned or could not go to stderr.
package main

import (
	"cmp"
	"context"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/inferload/inferload/capacity"
	"github.com/inferload/inferload/experiment"
	"github.com/inferload/inferload/internal/enginetest"
	"github.com/inferload/inferload/plan"
	"github.com/inferload/inferload/record"
	"github.com/inferload/inferload/sim"
	"github.com/inferload/inferload/summary"
)

func main() {
	configs := flag.String("configs", "tiny/1/12s,tiny/4/12s,wide/2/20s,wide/8/40s", "model/slots/step of each server, comma-separated (step: each level's length, a quarter of it warm-up)")
	keep := flag.String("keep", "", "write the sweeps here (default: a temporary directory, removed)")
	from := flag.String("from", "", "fit the sweeps under this directory (a previous -keep) instead of measuring")
	base := flag.String("base", "cpu-small", "the preset the fit starts from")
	flag.Parse()
	if err := run(*configs, *keep, *from, *base); err != nil {
		fmt.Fprintln(os.Stderr, "realcalibrate:", err)
		os.Exit(1)
	}
}

// config is one server: a model and its slots, on one thread, swept
// with levels of step each (a quarter of it warm-up).
type config struct {
	model string
	slots int
	step  time.Duration
}

func (c config) String() string { return fmt.Sprintf("%s, %d slot(s)", c.model, c.slots) }
func (c config) dir() string    { return fmt.Sprintf("%s-%d", c.model, c.slots) }

// levels are the sweep's users for a server of s slots: fitted on 1, s
// and 2s users (1, 2 and 4 for one slot), and checked below the slots
// (s/2) and between the fitted levels above them (3s/2, rounded up; 3
// for one slot). The top level stays at 2s: a 1-thread server of 8
// slots on the wide model needs seconds per request at 16 users already.
func levels(s int) (fit, check []int) {
	if s == 1 {
		return []int{1, 2, 4}, []int{3}
	}
	fit = []int{1, s, 2 * s}
	for _, u := range []int{s / 2, (3*s + 1) / 2} {
		if u > 1 && !slices.Contains(fit, u) && !slices.Contains(check, u) {
			check = append(check, u)
		}
	}
	return fit, check
}

func parseConfigs(s string) ([]config, error) {
	var out []config
	for _, f := range strings.Split(s, ",") {
		parts := strings.Split(strings.TrimSpace(f), "/")
		if len(parts) != 3 {
			return nil, fmt.Errorf("config %q: want model/slots/step, e.g. tiny/4/12s", f)
		}
		n, err := strconv.Atoi(parts[1])
		step, serr := time.ParseDuration(parts[2])
		if err != nil || serr != nil || n < 1 || step < 4*time.Second {
			return nil, fmt.Errorf("config %q: want model/slots/step with slots >= 1 and a step of 4s or more", f)
		}
		out = append(out, config{parts[0], n, step})
	}
	return out, nil
}

func run(configs string, keep, from, baseName string) error {
	cs, err := parseConfigs(configs)
	if err != nil {
		return err
	}
	base, err := sim.LookupProfile(baseName)
	if err != nil {
		return err
	}
	root := cmp.Or(from, keep)
	if root == "" {
		if root, err = os.MkdirTemp("", "realcalibrate-"); err != nil {
			return err
		}
		defer os.RemoveAll(root)
	}
	host, _ := os.Hostname()
	fmt.Printf("llama.cpp %s, 1 thread per server, on %s (%d CPUs); base %s\n\n", enginetest.LlamaVersion, host, runtime.NumCPU(), baseName)
	fmt.Println("| config | levels fitted | held-out level | throughput | TTFT P50 | TTFT P90 | measured req/s, TTFT P50, P90 | host noise | max_num_seqs | fitted batch cost | measured batch: TPOT P50 |")
	fmt.Println("|---|---|---|---|---|---|---|---|---|---|---|")
	for _, c := range cs {
		dir := filepath.Join(root, c.dir())
		if from == "" {
			if err := measure(c, dir); err != nil {
				return fmt.Errorf("%s: %w", c, err)
			}
		}
		if err := fitAndCheck(c, dir, base); err != nil {
			return fmt.Errorf("%s: %w", c, err)
		}
	}
	return nil
}

// measure starts c's server and sweeps its levels into dir.
func measure(c config, dir string) error {
	s, err := enginetest.Launch(enginetest.Llama{Model: c.model, Slots: c.slots})
	if err != nil {
		return err
	}
	defer s.Stop()
	fit, check := levels(c.slots)
	var loads []float64
	for _, u := range append(fit, check...) {
		loads = append(loads, float64(u))
	}
	slices.Sort(loads)
	p, err := plan.Parse("realcalibrate.yaml", fmt.Appendf(nil, `name: llama-%s
target: {url: %s/v1, model: %s}
workload: {input_tokens: "uniform(16,64)", output_tokens: "uniform(8,16)"}
observe: {interval: %s}
load: {concurrency: 1, warmup: %s, grace: 60s}
`, c.dir(), s.URL, c.model, scrapeInterval(c.step), c.step/4))
	if err != nil {
		return err
	}
	p.Output.Dir = dir
	start := time.Now()
	_, err = experiment.Sweep(context.Background(), p, experiment.Options{Env: experiment.Env{Getenv: func(string) string { return "" }}},
		experiment.SweepOptions{Mode: record.ModeClosed, Loads: loads, StepDuration: c.step})
	fmt.Fprintf(os.Stderr, "%s: swept %v in %s\n", c, loads, time.Since(start).Round(time.Second))
	return err
}

// scrapeInterval is how often a level of step is scraped: every second,
// or a twentieth of the level where that is longer. llama.cpp answers
// /metrics from its main loop, between batches, so a scrape waits for
// the batch running (seconds on the wide model with 8 slots); a scrape
// must have most of its interval to wait (observe.interval's timeout is
// 90% of it), and at 250 ms every scrape of a full server timed out.
func scrapeInterval(step time.Duration) time.Duration { return max(time.Second, step/20) }

// fitAndCheck calibrates on c's fit levels in dir's sweep and prints a
// row per checked level.
func fitAndCheck(c config, dir string, base sim.Profile) error {
	runs, err := filepath.Glob(filepath.Join(dir, "*", "plan.yaml"))
	if err != nil || len(runs) != 1 {
		return fmt.Errorf("%s: want one run directory, found %d", dir, len(runs))
	}
	run := filepath.Dir(runs[0])
	p, err := summary.ReadPlan(run)
	if err != nil {
		return err
	}
	built, err := summary.Assemble(run)
	if err != nil {
		return err
	}
	fit, check := levels(c.slots)
	cal, err := capacity.Calibrate(capacity.CalibrateOptions{Base: base, Seed: 1, Check: check,
		Runs: []capacity.MeasuredRun{{Dir: run, Summary: built.Summary, Users: p.Load.Concurrency, ThinkTime: p.Load.ThinkTime, Warmup: p.Load.Warmup}}})
	if err != nil {
		return err
	}
	for _, l := range append(cal.Learned, cal.Fit.Unidentified...) {
		fmt.Fprintf(os.Stderr, "%s: %s\n", c, l)
	}
	pct := func(got, want float64) string { return fmt.Sprintf("%+.0f%%", 100*(got-want)/want) }
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	for i, s := range cal.Steps {
		pr := cal.Fit.Predictions[i]
		fmt.Fprintf(os.Stderr, "%s: fitted %d users: %.2f -> %.2f req/s, TTFT p50 %.0f -> %.0f ms, p90 %.0f -> %.0f ms, TPOT p50 %.1f -> %.1f ms\n", c, s.Users,
			s.Throughput, pr.Throughput, ms(s.TTFTP50), ms(pr.TTFTP50), ms(s.TTFTP90), ms(pr.TTFTP90), ms(s.TPOTP50), ms(pr.TPOTP50))
	}
	fmt.Fprintf(os.Stderr, "%s: costs %+v, loss %.3f after %d evaluations\n", c, cal.Profile.Cost, cal.Fit.Loss, cal.Fit.Evals)
	noise := hostNoise(append(slices.Clone(cal.Steps), cal.Checked...), c.slots)
	for i, s := range cal.Checked {
		pr := cal.Predictions[i]
		fmt.Printf("| %s | %s | %d | %s | %s | %s | %.2f, %.0f ms, %.0f ms | %s | %d | %s | %s |\n", c, joinInts(fit), s.Users,
			pct(pr.Throughput, s.Throughput), pct(ms(pr.TTFTP50), ms(s.TTFTP50)), pct(ms(pr.TTFTP90), ms(s.TTFTP90)),
			s.Throughput, ms(s.TTFTP50), ms(s.TTFTP90), noise, cal.Profile.MaxNumSeqs, capacity.BatchCostShape(cal.Profile.Cost), measuredTPOT(cal.Steps))
	}
	return nil
}

// measuredTPOT is each fitted level's mean scraped batch and TPOT P50,
// what the batch-cost shape was fitted to, to read beside it: TPOT
// also carries the prompts computed in the same steps, so a fit may
// give part of the batch's cost to prefill.
func measuredTPOT(steps []capacity.FitStep) string {
	var out []string
	for _, s := range steps {
		out = append(out, fmt.Sprintf("%.1f: %.0f ms", s.Batch, float64(s.TPOTP50)/float64(time.Millisecond)))
	}
	return strings.Join(out, "; ")
}

// hostNoise is how far apart the throughputs of the levels at or above
// the slots lie, (max - min) / min: a server full at every one of them
// delivers the same requests/s at each (on one thread, a batch of s
// costs the same whoever waits), so the spread is what the host's other
// work did to the measurement, a floor under any prediction's error.
func hostNoise(steps []capacity.FitStep, slots int) string {
	lo, hi := math.Inf(1), 0.0
	for _, s := range steps {
		if s.Users >= slots {
			lo, hi = math.Min(lo, s.Throughput), math.Max(hi, s.Throughput)
		}
	}
	if hi == 0 || lo == 0 {
		return "n/a"
	}
	return fmt.Sprintf("%.0f%%", 100*(hi-lo)/lo)
}

func joinInts(xs []int) string {
	var s []string
	for _, x := range xs {
		s = append(s, strconv.Itoa(x))
	}
	return strings.Join(s, ", ")
}
