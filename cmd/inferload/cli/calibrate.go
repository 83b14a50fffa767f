package cli

import (
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/inferload/inferload/capacity"
	"github.com/inferload/inferload/sim"
	"github.com/inferload/inferload/summary"
)

func newCalibrateCmd(st *State) *cobra.Command {
	var base, out string
	var heldOut bool
	c := &cobra.Command{
		Use:   "calibrate RUN_DIR... [flags]",
		Short: "Fit a simulator profile to measured closed-loop runs (a sweep), for sim and fleet",
		Long: `Fit the simulator's cost model (step overhead, prefill per token, decode per
sequence, KV read per token) so that simulating each measured load level, with
the requests it sent, gives back its throughput and TTFT/TPOT percentiles, and
says how the decode cost grows with the batch. The batch limit is learned from
the scraped running batch where the server showed it full; the KV-cache and
token-budget limits are --base's; the fit says when the runs could not have
identified them. Prints the profile YAML (or writes --out) and, on stderr,
measured against fitted figures per level and, with --held-out, each level
predicted by a fit of the others.

  inferload sweep --url http://gpu-1:8000/v1 --model m --users 1,8,16,32,64 --duration 2m --out runs/a100
  inferload calibrate runs/a100/<run> --base a100-7b > a100-fitted.yaml
  inferload fleet --profile a100-fitted.yaml -f launch.yaml --peak-users 2000 --slo 'ttft.p99<=2s'

docs/capacity-planning.md explains the method and its limits.`,
		Args: cobra.MinimumNArgs(1),
	}
	c.Flags().StringVar(&base, "base", sim.DefaultProfile, "the preset (or profile YAML) whose limits are kept and whose costs the fit starts from")
	c.Flags().StringVar(&out, "out", "", "write the profile here instead of stdout")
	c.Flags().BoolVar(&heldOut, "held-out", true, "also predict each level from a fit of the others (needs 3 levels; costs one fit per level)")
	c.RunE = func(_ *cobra.Command, dirs []string) error {
		prof, err := loadProfile(base)
		if err != nil {
			return usageError(err)
		}
		runs, err := measuredRuns(dirs)
		if err != nil {
			return err
		}
		cal, err := capacity.Calibrate(capacity.CalibrateOptions{Runs: runs, Base: prof, HeldOut: heldOut, Seed: 1})
		if err != nil {
			return err
		}
		cal.Profile.Name = "fitted-" + prof.Name
		cal.Profile.Description = fmt.Sprintf("fitted to %s by inferload calibrate", strings.Join(dirs, ", "))
		writeCalibration(st.Stderr, cal)
		header := []string{
			fmt.Sprintf("fitted by inferload calibrate to %d load levels of %s", len(cal.Steps), strings.Join(dirs, ", ")),
			fmt.Sprintf("loss %.4f (summed squared log error) after %d evaluations; per level, measured -> fitted:", cal.Fit.Loss, cal.Fit.Evals)}
		for i, s := range cal.Steps {
			p := cal.Fit.Predictions[i]
			header = append(header, fmt.Sprintf("  %d users: %.2f -> %.2f req/s, TTFT p50 %s -> %s, p99 %s -> %s, TPOT p50 %s -> %s", s.Users,
				s.Throughput, p.Throughput, s.TTFTP50.Round(time.Millisecond), p.TTFTP50.Round(time.Millisecond),
				s.TTFTP99.Round(time.Millisecond), p.TTFTP99.Round(time.Millisecond), s.TPOTP50.Round(100*time.Microsecond), p.TPOTP50.Round(100*time.Microsecond)))
		}
		header = append(header, "decode cost against batch: "+capacity.BatchCostShape(cal.Profile.Cost))
		for _, u := range cal.Fit.Unidentified {
			header = append(header, "not identified: "+u)
		}
		header = append(header, cal.Learned...)
		yaml, err := capacity.FittedYAML(cal.Profile, prof.Name, header)
		if err != nil {
			return err
		}
		if out == "" {
			_, err = st.Stdout.Write(yaml)
			return err
		}
		return os.WriteFile(out, yaml, 0o644)
	}
	return c
}

// measuredRuns reads the run directories for capacity.Calibrate: each
// one's plan (its load) and its summary as `inferload report` rebuilds
// it. (capacity assembles no summary: summary reads plans, which know the
// engine.) An open-loop run is read without its summary: calibration
// refuses it, saying why.
func measuredRuns(dirs []string) ([]capacity.MeasuredRun, error) {
	var out []capacity.MeasuredRun
	for _, dir := range dirs {
		p, err := summary.ReadPlan(dir)
		if err != nil {
			return nil, err
		}
		run := capacity.MeasuredRun{Dir: dir, OpenLoop: p.Load.OpenLoop(), Users: p.Load.Concurrency,
			ThinkTime: p.Load.ThinkTime, Warmup: p.Load.Warmup}
		if !run.OpenLoop {
			built, err := summary.Assemble(dir)
			if err != nil {
				return nil, err
			}
			run.Summary = built.Summary
		}
		out = append(out, run)
	}
	return out, nil
}

// writeCalibration prints measured against fitted (and held-out) figures
// per level, and what the runs could not identify.
func writeCalibration(w io.Writer, cal *capacity.Calibration) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	ms := func(d time.Duration) string { return fmt.Sprintf("%.1f", float64(d)/float64(time.Millisecond)) }
	head := "users\treq/s meas\tfit\tTTFT p50 meas\tfit\tTTFT p99 meas\tfit\tTPOT p50 meas\tfit\t"
	if cal.HeldOut != nil {
		head += "held-out req/s\tTTFT p99\t"
	}
	fmt.Fprintln(tw, head)
	for i, s := range cal.Steps {
		p := cal.Fit.Predictions[i]
		line := fmt.Sprintf("%d\t%.2f\t%.2f\t%s\t%s\t%s\t%s\t%s\t%s\t", s.Users, s.Throughput, p.Throughput,
			ms(s.TTFTP50), ms(p.TTFTP50), ms(s.TTFTP99), ms(p.TTFTP99), ms(s.TPOTP50), ms(p.TPOTP50))
		if cal.HeldOut != nil {
			h := cal.HeldOut[i]
			line += fmt.Sprintf("%.2f\t%s\t", h.Throughput, ms(h.TTFTP99))
		}
		fmt.Fprintln(tw, line)
	}
	tw.Flush()
	c := cal.Profile.Cost
	fmt.Fprintf(w, "fitted costs: step overhead %s, prefill %s/token, decode %s/sequence, KV read %s/token\n",
		c.StepOverhead, c.PrefillPerToken, c.DecodePerSeq, c.KVReadPerToken)
	fmt.Fprintln(w, "decode cost against batch: "+capacity.BatchCostShape(c))
	for _, l := range cal.Learned {
		fmt.Fprintln(w, l)
	}
	for _, u := range cal.Fit.Unidentified {
		fmt.Fprintln(w, "warning: "+u)
	}
}
