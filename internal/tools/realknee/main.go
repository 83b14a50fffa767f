// Command realknee checks find-capacity's answer on real llama.cpp
// servers: for each configuration (model and slots, one thread) it
// starts llama-server, checks the measurement against the server's own
// timings, runs find-capacity for a TTFT p90 objective set from a
// one-user probe, then reruns the server N times at the answer and 25%
// above it (rounded up to a whole user), counting how often the
// objective holds. TRUTH.md's
// "Knee and capacity on real engines" was made by it.
//
//	go run ./internal/tools/realknee [-configs tiny:1,tiny:2,tiny:4,tiny:8] [-mode closed|open] [-reruns 10] [-samples 40] [-confirm 0] [-dir DIR]
//
// -confirm N runs find-capacity with --confirm N and a budget of
// 8 + 3N probes (analyze.ProbesPerConfirmation).
//
// It needs `make engines`; the wide model (-configs wide:2,wide:8) also
// MODELS="tiny wide" ./scripts/llamacpp-model.sh. The run directories stay under DIR (default a new temporary directory,
// printed).
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/inferload/inferload/analyze"
	"github.com/inferload/inferload/record"
)

func main() {
	configs := flag.String("configs", "tiny:1,tiny:2,tiny:4,tiny:8", "configurations MODEL:SLOTS, comma-separated (MODEL tiny or wide)")
	reruns := flag.Int("reruns", 10, "reruns at the answer and at +25%")
	samples := flag.Int("samples", 40, "measured requests each probe at the lowest load (and each rerun) is sized for, at half the one-user speed")
	dir := flag.String("dir", "", "where the run directories go (default: a new temporary directory)")
	mode := flag.String("mode", record.ModeClosed, "closed (search users) or open (search requests/s, Poisson)")
	confirm := flag.Int("confirm", 0, fmt.Sprintf("find-capacity --confirm: probes at the answer beyond the one that found it, each of which must pass; each adds %d probes to the search's budget of %d (room to step back once and confirm the load below)",
		analyze.ProbesPerConfirmation, searchFor(record.ModeClosed, oneUser{}, 1).MaxProbes))
	flag.Parse()
	if err := run(*configs, *mode, *reruns, *samples, *confirm, *dir); err != nil {
		fmt.Fprintln(os.Stderr, "realknee:", err)
		os.Exit(1)
	}
}

func run(configs, mode string, reruns, samples, confirm int, dir string) error {
	cs, err := parseConfigs(configs)
	if err != nil {
		return err
	}
	if mode != record.ModeClosed && mode != record.ModeOpen {
		return fmt.Errorf("-mode %q: want closed or open", mode)
	}
	if reruns < 1 || samples < 1 || confirm < 0 {
		return fmt.Errorf("-reruns %d, -samples %d, -confirm %d: want at least 1, 1 and 0", reruns, samples, confirm)
	}
	if dir == "" {
		if dir, err = os.MkdirTemp("", "realknee-"); err != nil {
			return err
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	s := suite{Mode: mode, Reruns: reruns, Samples: samples, Confirm: confirm, Dir: dir, Log: os.Stderr}
	fmt.Fprintf(os.Stderr, "realknee: run directories under %s\n", dir)
	var outs []*outcome
	for _, c := range cs {
		fmt.Fprintf(os.Stderr, "%s:%d (started %s)\n", c.Model, c.Slots, time.Now().Format(time.TimeOnly))
		o, err := s.runConfig(ctx, c)
		if err != nil {
			return fmt.Errorf("%s:%d: %w", c.Model, c.Slots, err)
		}
		fmt.Print(configTable(o))
		outs = append(outs, o)
	}
	fmt.Print(summaryTable(outs))
	return nil
}
