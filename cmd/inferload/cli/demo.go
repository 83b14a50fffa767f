package cli

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/inferload/inferload/analyze"
	"github.com/inferload/inferload/experiment"
	"github.com/inferload/inferload/plan"
	"github.com/inferload/inferload/record"
	"github.com/inferload/inferload/sim"
)

// The demo's workload: a chat service that also takes documents, the
// traffic that makes short requests queue behind long prefills. Two
// classes, so every figure is broken down by them: short chat (prompts of
// 128 and 512 tokens, 7:2) and long documents (2048 tokens, 1 in 10), the
// published 7:2:1 mix. Answers are kept short (64 and 128 tokens) so that
// each step's requests finish in seconds and the whole sweep fits in about
// two minutes. Long prompts shrink to fit a small model's context window.
const (
	demoChatOutput = "64"
	demoDocsOutput = "128"
	// demoChatTTFTMs is the chat class's SLO, a chat service's usual
	// promise (the first token within 600 ms); documents have none.
	// The sweep judges each step by it at the knee's P90: the operating
	// point is the highest step at which chat kept it, not only a fraction
	// of the knee.
	demoChatTTFTMs = 600
	// demoUsers are the sweep's steps: 1 user is the baseline, then loads
	// below, near and past the a100-7b profile's saturation.
	demoUsers = "1,24,64,160"
)

// demoClasses are the demo's request classes for a model of the given
// context window.
func demoClasses(maxModelLen int) []plan.Class {
	long := max(min(2048, maxModelLen-256), 1)
	return []plan.Class{
		{Name: "chat", Weight: 9, InputTokens: fmt.Sprintf("buckets(%d:7,%d:2)", min(128, long), min(512, long)), OutputTokens: demoChatOutput,
			SLO: record.SLO{TTFTMs: demoChatTTFTMs}},
		{Name: "docs", Weight: 1, InputTokens: fmt.Sprint(long), OutputTokens: demoDocsOutput},
	}
}

func newDemoCmd(st *State) *cobra.Command {
	var f simFlags
	var out outputFlags
	var users string
	var duration, warmup time.Duration
	var dir string
	c := &cobra.Command{
		Use:   "demo [flags]",
		Short: "Sweep a realistic mixed workload against the built-in simulated server",
		Long: `Start the simulated LLM server in-process on a free loopback port (by default a
7B model on one A100, see docs/sim.md) and sweep it: a single user, then
--users closed-loop users, each step --duration long with its first --warmup
discarded. Two request classes: chat (prompts of 128 or 512 tokens, 7:2,
64-token answers) and docs (2048-token prompts, 1 request in 10, 128-token
answers); chat's SLO is a first token within 600 ms. Prints where to run (the
highest step at which chat's TTFT P90 met its SLO), each step, the knee and
each class's TTFT, with live progress. No GPU and no network needed.`,
		Args: cobra.NoArgs,
	}
	f.bind(c)
	out.bind(c)
	c.Flags().StringVar(&users, "users", demoUsers, "closed-loop loads to step through")
	c.Flags().DurationVar(&duration, "duration", 25*time.Second, "each step's length, warm-up included")
	c.Flags().DurationVar(&warmup, "warmup", 5*time.Second, "each step's initial period excluded from its statistics")
	c.Flags().StringVar(&dir, "out", plan.DefaultOutputDir, "parent directory of run directories")
	c.RunE = func(cmd *cobra.Command, _ []string) error {
		if err := out.validate(); err != nil {
			return err
		}
		loads, err := experiment.ParseLoads(users, true)
		if err != nil {
			return usageError(err)
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
		p, err := demoPlan(url, cfg.Profile.Model, demoClasses(cfg.Profile.MaxModelLen), duration, warmup, dir)
		if err != nil {
			return usageError(err)
		}
		if !out.quiet {
			fmt.Fprintf(st.Stderr, "simulated %s at %s; sweeping %s users, %s per step (warm-up %s); classes chat (9 in 10) and docs (1 in 10)\n",
				cfg.Profile.Name, url, users, duration, warmup)
		}
		o := experiment.SweepOptions{Mode: record.ModeClosed, Loads: loads, StepDuration: duration, Knee: analyze.DefaultKnee,
			Stage: experiment.StageOptions{Criteria: analyze.Criteria{Required: analyze.DefaultKnee.Percentile}, StopFailureRate: 0.10}}
		return runExperiment(cmd.Context(), st, out, p, func(ctx context.Context, opts experiment.Options) (*experiment.Outcome, error) {
			return experiment.Sweep(ctx, p, opts, o)
		})
	}
	return c
}

// demoPlan is the plan the demo sweeps.
func demoPlan(url, model string, classes []plan.Class, duration, warmup time.Duration, dir string) (*plan.Plan, error) {
	p := &plan.Plan{
		Name:     "demo",
		Target:   plan.Target{URL: url, Model: model},
		Load:     plan.LoadOptions{Concurrency: 1, Duration: duration, Warmup: warmup},
		Workload: plan.Workload{Classes: classes},
		Output:   plan.Output{Dir: dir},
	}
	p.ApplyDefaults()
	return p, p.Validate()
}
