// Command realfleet checks `inferload fleet` on real engines, as a user
// would plan and then verify a fleet: it starts a llama.cpp server on
// loopback (internal/enginetest), sweeps it, calibrates a profile on the
// sweep, asks `fleet` what TTFT one and two replicas of it give a closed
// loop of -users users (round-robin, as inferload's own target.replicas
// spreads them), sets the SLO halfway between the two predicted P90s so
// that fleet's answer is two replicas, and then measures -users users
// against one server and against two (target.replicas), checking the
// SLO where fleet said it would hold and break. TRUTH.md's "Fleet on
// real replicas" was made by it. It needs `make engines`.
//
//	go run ./internal/tools/realfleet [-model tiny] [-slots 1] [-users 4] [-step 12s] [-measure 30s] [-repeats 3]
//
// Every command it runs is printed on stderr, with its output under
// -keep (default: a temporary directory, removed).
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/inferload/inferload/internal/enginetest"
	"github.com/inferload/inferload/record"
	"github.com/inferload/inferload/rundir"
)

func main() {
	o := options{}
	flag.StringVar(&o.model, "model", "tiny", "the test model each server loads")
	flag.IntVar(&o.slots, "slots", 1, "slots per server (1 thread each)")
	flag.IntVar(&o.users, "users", 4, "closed-loop users the fleet is planned for and measured at")
	flag.DurationVar(&o.step, "step", 12*time.Second, "each sweep level's length (a quarter of it warm-up)")
	flag.DurationVar(&o.measure, "measure", 30*time.Second, "each measured run's length (a fifth of it warm-up)")
	flag.IntVar(&o.repeats, "repeats", 3, "measured runs at each fleet size")
	flag.StringVar(&o.keep, "keep", "", "keep every run directory and the fitted profile here")
	flag.StringVar(&o.base, "base", "cpu-small", "the preset calibrate starts from")
	flag.Parse()
	if err := run(o); err != nil {
		fmt.Fprintln(os.Stderr, "realfleet:", err)
		os.Exit(1)
	}
}

type options struct {
	model         string
	slots, users  int
	step, measure time.Duration
	repeats       int
	keep, base    string
	bin, dir      string
	servers       [2]*enginetest.LlamaServer
}

// workload is every command's workload: short prompts and replies, as
// the other real-engine tools send.
var workload = []string{"--input-tokens", "uniform(16,64)", "--output-tokens", "uniform(8,16)", "--gpu=false"}

func run(o options) error {
	var err error
	if o.dir = o.keep; o.dir == "" {
		if o.dir, err = os.MkdirTemp("", "realfleet-"); err != nil {
			return err
		}
		defer os.RemoveAll(o.dir)
	}
	if err := os.MkdirAll(o.dir, 0o755); err != nil {
		return err
	}
	o.bin = filepath.Join(o.dir, "inferload")
	if out, err := exec.Command("go", "build", "-o", o.bin, "./cmd/inferload").CombinedOutput(); err != nil {
		return fmt.Errorf("building inferload: %v\n%s", err, out)
	}
	for i := range o.servers {
		s, err := enginetest.Launch(enginetest.Llama{Model: o.model, Slots: o.slots})
		if err != nil {
			return err
		}
		defer s.Stop()
		o.servers[i] = s
	}
	a, b := o.servers[0].URL+"/v1", o.servers[1].URL+"/v1"
	start := time.Now()

	// 1. Sweep one server and calibrate a profile on it.
	var levels []string
	for u := 1; u <= o.slots+2; u++ {
		levels = append(levels, strconv.Itoa(u))
	}
	if _, err := o.inferload(append([]string{"sweep", "--url", a, "--model", o.model, "--users", strings.Join(levels, ","),
		"--duration", o.step.String(), "--warmup", (o.step / 4).String(), "--scrape-interval", "1s", "--out", filepath.Join(o.dir, "sweep"), "-q"}, workload...)...); err != nil {
		return err
	}
	sweepRun, err := onlyRun(filepath.Join(o.dir, "sweep"))
	if err != nil {
		return err
	}
	profile := filepath.Join(o.dir, "fitted.yaml")
	if _, err := o.inferload("calibrate", sweepRun, "--base", o.base, "--held-out=false", "--out", profile); err != nil {
		return err
	}

	// 2. What fleet predicts for one and two replicas: an SLO any size
	// meets makes it simulate one; one no size meets, with two at most,
	// makes it start at (and simulate) two.
	fleetArgs := append([]string{"fleet", "--url", a, "--model", o.model, "--profile", profile, "--peak-users", strconv.Itoa(o.users),
		"--headroom", "0", "--router", "round-robin", "--max-replicas", "2", "--duration", "120s", "--output", "json"}, workload...)
	pred := map[int]record.Stats{}
	for _, slo := range []string{"ttft.p90<=1h", "ttft.p90<=1ms"} {
		probe, err := o.fleet(append(fleetArgs, "--slo", slo)...)
		if err != nil {
			return err
		}
		for _, p := range probe.Probes {
			pred[p.Replicas] = p.Metrics.TTFT
		}
	}
	if len(pred) != 2 {
		return fmt.Errorf("fleet simulated sizes %v, want 1 and 2", pred)
	}
	slo := (pred[1].P90 + pred[2].P90) / 2
	answer, err := o.fleet(append(fleetArgs, "--slo", fmt.Sprintf("ttft.p90<=%.0fms", slo))...)
	if err != nil {
		return err
	}

	// 3. Measure both sizes, -repeats times each, alternating.
	measured := map[int][]record.Stats{}
	for r := range o.repeats {
		for _, n := range []int{1, 2} {
			args := append([]string{"run", "--url", a, "--model", o.model, "--concurrency", strconv.Itoa(o.users),
				"--duration", o.measure.String(), "--warmup", (o.measure / 5).String(), "--out", filepath.Join(o.dir, fmt.Sprintf("n%d-%d", n, r)), "-q", "--allow-invalid"}, workload...)
			if n == 2 {
				args = append(args, "--replica", b)
			}
			if _, err := o.inferload(args...); err != nil {
				return err
			}
			dir, err := onlyRun(filepath.Join(o.dir, fmt.Sprintf("n%d-%d", n, r)))
			if err != nil {
				return err
			}
			s, err := rundir.ReadSummary(filepath.Join(dir, rundir.Summary))
			if err != nil {
				return err
			}
			measured[n] = append(measured[n], s.Metrics.TTFT)
		}
	}
	report(o, pred, slo, answer.Replicas, measured, time.Since(start))
	return nil
}

// report prints the Markdown table and the verdict check.
func report(o options, pred map[int]record.Stats, slo float64, answer int, measured map[int][]record.Stats, took time.Duration) {
	host, _ := os.Hostname()
	fmt.Printf("llama.cpp %s, %s model, %d slot(s) and 1 thread per server, on %s (%d CPUs); %d closed-loop users; profile calibrated on 1..%d users from %s; took %s\n\n",
		enginetest.LlamaVersion, o.model, o.slots, host, runtime.NumCPU(), o.users, o.slots+2, o.base, took.Round(time.Second))
	fmt.Printf("SLO ttft.p90 <= %.0f ms (halfway between the predictions); fleet's answer: %d replica(s)\n\n", slo, answer)
	fmt.Println("| replicas | predicted TTFT P50 | predicted TTFT P90 | measured TTFT P50 (each run) | measured TTFT P90 (each run) | SLO held in | fleet said |")
	fmt.Println("|---|---|---|---|---|---|---|")
	for _, n := range []int{1, 2} {
		var p50, p90 []string
		held := 0
		for _, m := range measured[n] {
			p50, p90 = append(p50, fmt.Sprintf("%.0f", m.P50)), append(p90, fmt.Sprintf("%.0f", m.P90))
			if m.P90 <= slo {
				held++
			}
		}
		said := "breaks"
		if n >= answer && answer > 0 {
			said = "holds"
		}
		fmt.Printf("| %d | %.0f ms | %.0f ms | %s ms | %s ms | %d of %d | %s |\n", n, pred[n].P50, pred[n].P90,
			strings.Join(p50, ", "), strings.Join(p90, ", "), held, len(measured[n]), said)
	}
}

// inferload runs the built binary with args, printing the command.
func (o options) inferload(args ...string) ([]byte, error) {
	fmt.Fprintln(os.Stderr, "+ inferload", strings.Join(args, " "))
	cmd := exec.Command(o.bin, args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if err != nil {
		if ee, ok := err.(*exec.ExitError); ok && args[0] == "fleet" && ee.ExitCode() == 99 {
			err = nil // no size met the SLO: the answer says so
		}
	}
	if err != nil {
		return nil, fmt.Errorf("inferload %s: %v\n%s", args[0], err, errb.String())
	}
	return out.Bytes(), nil
}

// fleet runs fleet and reads its JSON answer.
func (o options) fleet(args ...string) (*record.Fleet, error) {
	out, err := o.inferload(args...)
	if err != nil {
		return nil, err
	}
	var f record.Fleet
	if err := json.Unmarshal(out, &f); err != nil {
		return nil, fmt.Errorf("fleet's JSON: %v\n%s", err, out)
	}
	return &f, nil
}

// onlyRun is the one run directory under dir.
func onlyRun(dir string) (string, error) {
	runs, err := filepath.Glob(filepath.Join(dir, "*", "summary.json"))
	if err != nil || len(runs) != 1 {
		return "", fmt.Errorf("%s: want one run directory, found %d", dir, len(runs))
	}
	return filepath.Dir(runs[0]), nil
}
