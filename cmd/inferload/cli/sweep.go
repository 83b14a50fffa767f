package cli

import (
	"context"
	"slices"

	"github.com/spf13/cobra"

	"github.com/inferload/inferload/analyze"
	"github.com/inferload/inferload/experiment"
	"github.com/inferload/inferload/plan"
	"github.com/inferload/inferload/record"
)

// sweepFlags are sweep's own options, beside the plan's.
type sweepFlags struct {
	stepLoads
	knee            analyze.KneeOptions
	confidence      float64
	stopFailureRate float64
	slos            []string
	maxFailureRate  float64
}

func (f *sweepFlags) bind(c *cobra.Command) {
	fs := c.Flags()
	fs.StringVar(&f.users, "users", "", "closed-loop loads to step through: 1,8,16,32 or geometric(1,2,128)")
	fs.StringVar(&f.rates, "rates", "", "open-loop loads (requests/s) to step through: 1,2,4,8 or geometric(0.5,2,16)")
	fs.Float64Var(&f.knee.ThroughputGain, "knee-throughput-gain", analyze.DefaultKnee.ThroughputGain, "knee: throughput grew less than this fraction from one step to the next…")
	fs.Float64Var(&f.knee.LatencyGrowth, "knee-latency-growth", analyze.DefaultKnee.LatencyGrowth, "…while TTFT or E2E at --knee-percentile grew more than this fraction")
	fs.StringVar(&f.knee.Percentile, "knee-percentile", analyze.DefaultKnee.Percentile, "latency percentile the knee compares: p50, p90, p95, p99 or p999")
	fs.Float64Var(&f.knee.OperatingFraction, "operating-point", analyze.DefaultKnee.OperatingFraction, "recommend running at this fraction of the knee")
	fs.Float64Var(&f.confidence, "confidence", analyze.DefaultConfidence, "confidence a percentile's sample count must give for a step to count")
	fs.Float64Var(&f.stopFailureRate, "stop-failure-rate", 0.10, "end the sweep after a step whose failure rate exceeds this (0: never)")
	fs.StringArrayVar(&f.slos, "slo", nil, sloFlagHelp+"; the operating point is the highest step meeting every one (default: the plan's goodput SLOs at --knee-percentile)")
	fs.Float64Var(&f.maxFailureRate, "max-failure-rate", analyze.DefaultMaxFailureRate, "a step meeting the SLOs has a failure rate at most this")
}

func (f *sweepFlags) busiest(o experiment.SweepOptions) (string, float64) {
	return o.Mode, slices.Max(o.Loads)
}

// options checks the flags and turns them into the sweep's options.
func (f *sweepFlags) options(p *plan.Plan) (experiment.SweepOptions, error) {
	stepDuration := p.Load.Duration
	if stepDuration <= 0 {
		return experiment.SweepOptions{}, usageErrorf("--duration: each step's length is required (a sweep does not stop on --requests)")
	}
	mode, list, err := f.pick("")
	if err != nil {
		return experiment.SweepOptions{}, err
	}
	loads, err := experiment.ParseLoads(list, mode == record.ModeClosed)
	if err != nil {
		return experiment.SweepOptions{}, usageError(err)
	}
	if !(f.confidence > 0 && f.confidence < 1) {
		return experiment.SweepOptions{}, usageErrorf("--confidence %v: want a fraction between 0 and 1", f.confidence)
	}
	if _, err := analyze.FindKnee(nil, f.knee); err != nil {
		return experiment.SweepOptions{}, usageError(err)
	}
	if !(f.maxFailureRate > 0 && f.maxFailureRate < 1) {
		return experiment.SweepOptions{}, usageErrorf("--max-failure-rate %v: want a fraction above 0 and below 1", f.maxFailureRate)
	}
	slos, err := parseObjectives(f.slos)
	if err != nil {
		return experiment.SweepOptions{}, err
	}
	return experiment.SweepOptions{
		Mode: mode, Loads: loads, StepDuration: stepDuration, Knee: f.knee, SLOs: slos, MaxFailureRate: f.maxFailureRate,
		Stage: experiment.StageOptions{
			Criteria:        analyze.Criteria{Confidence: f.confidence, Required: f.knee.Percentile},
			StopFailureRate: f.stopFailureRate,
		},
	}, nil
}

func newSweepCmd(st *State) *cobra.Command {
	return newSteppedCmd(st, &cobra.Command{
		Use:   "sweep [flags]",
		Short: "Step through loads, find the knee and the safe operating point",
		Long: `Run a single-request baseline, then one step per load, each for --duration
with its first --warmup discarded, into one run directory. Prints a table of
throughput, TTFT/ITL/E2E percentiles, failure rate and goodput per step,
whether each step is valid, and the knee: the load beyond which throughput
grows less than --knee-throughput-gain while latency grows more than
--knee-latency-growth, and the recommended operating point: with SLOs (--slo,
or the plan's workload.slo and class slo at --knee-percentile), the highest step
at which every one held at --confidence, judged as find-capacity judges a
probe; without, --operating-point of the knee.

  inferload sweep --url http://127.0.0.1:8000/v1 --model m --users 1,8,16,32,64 --duration 2m --warmup 30s
  inferload sweep --url http://127.0.0.1:8000/v1 --model m --rates 'geometric(1,2,64)' --duration 1m
  inferload sweep -f plan.yaml --users 8,16,32,64 --duration 2m --slo 'ttft.p99<=2s' --slo 'tpot.p99<=80ms'

Every plan flag applies (see docs/plan.md); docs/experiments.md explains the method.`,
		Args: cobra.NoArgs,
	}, &sweepFlags{}, experiment.Sweep)
}

// stepLoads are a stepped experiment's --users or --rates.
type stepLoads struct {
	users, rates string
}

// open reports whether the loads are rates (an open loop).
func (l *stepLoads) open() bool { return l.rates != "" }

// pick returns the loop and the loads of the one flag set, or a usage
// error when both or neither are; form is what the flags take (" LOW:HIGH").
func (l *stepLoads) pick(form string) (mode, loads string, err error) {
	if (l.users == "") == (l.rates == "") {
		return "", "", usageErrorf("set --users%s (closed loop) or --rates%s (open loop), not both", form, form)
	}
	if l.open() {
		return record.ModeOpen, l.rates, nil
	}
	return record.ModeClosed, l.users, nil
}

// steppedFlags are the own flags of an experiment that sets each step's
// load itself (sweep, find-capacity), checked into its options O.
type steppedFlags[O any] interface {
	bind(c *cobra.Command)
	// open reports whether the loads are rates (an open loop).
	open() bool
	options(p *plan.Plan) (O, error)
	// busiest is the loop and the highest load a step of o runs at.
	busiest(o O) (mode string, load float64)
}

// newSteppedCmd completes c as a stepped experiment's command: the plan's
// flags and -f, the output and distribution flags and f; it checks them,
// warns when the busiest step needs more files than the process may open,
// and runs the experiment.
func newSteppedCmd[O any](st *State, c *cobra.Command, f steppedFlags[O],
	run func(context.Context, *plan.Plan, experiment.Options, O) (*experiment.Outcome, error)) *cobra.Command {
	var file string
	var out outputFlags
	var repeat int
	flags := plan.BindFlags(c.Flags())
	c.Flags().StringVarP(&file, "file", "f", "", "YAML plan file (flags override its fields)")
	c.Flags().IntVar(&repeat, "repeat", 1, "run the whole experiment this many times back to back (NAME-1, NAME-2, ...) and print each step's figures over the runs with their confidence interval, and each run's verdicts with how many agree (2 to 100)")
	out.bind(c)
	out.dist.bind(c)
	f.bind(c)
	c.RunE = func(cmd *cobra.Command, _ []string) error {
		if err := out.validate(); err != nil {
			return err
		}
		if err := chooseLoop(cmd, f.open()); err != nil {
			return err
		}
		p, err := plan.Load(file, flags, st.Getenv)
		if err != nil {
			return usageError(err)
		}
		o, err := f.options(p)
		if err != nil {
			return err
		}
		mode, load := f.busiest(o)
		warnFileLimit(st.Stderr, stepConnections(p, mode, load))
		once := func(ctx context.Context, st *State, q *plan.Plan, out outputFlags) error {
			return runExperiment(ctx, st, out, q, func(ctx context.Context, opts experiment.Options) (*experiment.Outcome, error) {
				return run(ctx, q, opts, o)
			})
		}
		if cmd.Flags().Changed("repeat") {
			if err := checkRepeat(cmd, repeat); err != nil {
				return err
			}
			return runSteppedRepeats(cmd.Context(), st, p, out, repeat, once)
		}
		return once(cmd.Context(), st, p, out)
	}
	return c
}

// chooseLoop sets --concurrency or --rate, which the plan needs to pick
// its loop, unless the user set one: the experiment sets each step's load.
func chooseLoop(cmd *cobra.Command, open bool) error {
	fs := cmd.Flags()
	if fs.Changed("concurrency") || fs.Changed("rate") {
		return nil
	}
	if open {
		return fs.Set("rate", "1")
	}
	return fs.Set("concurrency", "1")
}
