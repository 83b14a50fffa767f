package cli

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/inferload/inferload/plan"
	"github.com/inferload/inferload/sim"
)

// Demo workload: the mix of a chat service with documents — 70% short
// prompts, 20% medium, 10% long — and short or long answers, the traffic
// that makes short requests queue behind long ones. Long prompts shrink to
// fit a small model's context window (prompt + answer ≤ max_model_len).
const demoOutput = "buckets(128:1,512:1)"

// demoInput is the demo's prompt mix for a model with the given context.
func demoInput(maxModelLen int) string {
	long := max(min(2048, maxModelLen-512), 1)
	return fmt.Sprintf("buckets(%d:7,%d:2,%d:1)", min(128, long), min(512, long), long)
}

func newDemoCmd(st *State) *cobra.Command {
	var f simFlags
	var out outputFlags
	var concurrency int
	var duration, warmup time.Duration
	var dir string
	c := &cobra.Command{
		Use:   "demo [flags]",
		Short: "Run a realistic mixed workload against the built-in simulated server",
		Long: `Start the simulated LLM server in-process on a free loopback port (by default a
7B model on one A100, see docs/sim.md), run a closed-loop test with a mixed
workload against it — prompts of 128/512/2048 tokens mixed 7:2:1, answers of
128 or 512 tokens — with live progress, then print the summary and the run
directory. No GPU and no network needed.`,
		Args: cobra.NoArgs,
	}
	f.bind(c)
	out.bind(c)
	c.Flags().IntVar(&concurrency, "concurrency", 64, "closed-loop users")
	c.Flags().DurationVar(&duration, "duration", 60*time.Second, "how long to issue requests (in-flight ones then finish)")
	c.Flags().DurationVar(&warmup, "warmup", 10*time.Second, "initial period excluded from the statistics")
	c.Flags().StringVar(&dir, "out", plan.DefaultOutputDir, "parent directory of run directories")
	c.RunE = func(cmd *cobra.Command, _ []string) error {
		if err := out.validate(); err != nil {
			return err
		}
		cfg, err := f.config()
		if err != nil {
			return err
		}
		srv, url, err := sim.Start(cfg, "127.0.0.1:0")
		if err != nil {
			return err
		}
		defer srv.Close()
		input := demoInput(cfg.Profile.MaxModelLen)
		p, err := demoPlan(url, cfg.Profile.Model, input, concurrency, duration, warmup, dir)
		if err != nil {
			return usageError(err)
		}
		if !out.quiet {
			fmt.Fprintf(st.Stderr, "simulated %s at %s; %d users for %s (warm-up %s), prompts %s, outputs %s\n",
				cfg.Profile.Name, url, concurrency, duration, warmup, input, demoOutput)
		}
		return runPlan(cmd.Context(), st, p, out)
	}
	return c
}

// demoPlan is the plan the demo runs.
func demoPlan(url, model, input string, concurrency int, duration, warmup time.Duration, dir string) (*plan.Plan, error) {
	p := &plan.Plan{
		Name:     "demo",
		Target:   plan.Target{URL: url, Model: model},
		Load:     plan.LoadOptions{Concurrency: concurrency, Duration: duration, Warmup: warmup},
		Workload: plan.Workload{InputTokens: input, OutputTokens: demoOutput},
		Output:   plan.Output{Dir: dir},
	}
	p.ApplyDefaults()
	return p, p.Validate()
}
