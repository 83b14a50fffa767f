package cli

import (
	"context"
	"time"

	"github.com/spf13/cobra"

	"github.com/inferload/inferload/analyze"
	"github.com/inferload/inferload/experiment"
	"github.com/inferload/inferload/plan"
)

func newSoakCmd(st *State) *cobra.Command {
	var file string
	var out outputFlags
	var so experiment.SoakOptions
	c := &cobra.Command{
		Use:   "soak [flags]",
		Short: "Run a long test and say whether latency, throughput or failures drifted",
		Long: `Run one long phase (as run does), cut its measured window into --window-long
windows and test P50, P90 and P99 of TTFT and E2E, throughput and failure
rate for a trend (Mann-Kendall, significance --alpha, shared by a latency's
quantiles; a change under --min-change does not count). Each quantile is
tested in windows holding enough requests to back it (299 for P99); one the
soak is too short for is not tested, and the warning says how long a soak
would test it. Every verdict gives the change over the soak and its
interval, e.g. "P50 TTFT rose 75% over 1m30s (97.5% CI +3% to +266%),
significant (Mann-Kendall p = 0.0085, α = 0.05/2, 6 windows)".

  inferload soak --url http://127.0.0.1:8000/v1 --model m --concurrency 48 --duration 6h --warmup 5m --window 5m

docs/experiments.md explains the method.`,
		Args: cobra.NoArgs,
	}
	flags := plan.BindFlags(c.Flags())
	c.Flags().StringVarP(&file, "file", "f", "", "YAML plan file (flags override its fields)")
	out.bind(c)
	out.dist.bind(c)
	c.Flags().DurationVar(&so.Window, "window", 0, "length of each window the drift test compares (required), e.g. 5m")
	c.Flags().Float64Var(&so.Drift.Alpha, "alpha", analyze.DefaultDrift.Alpha, "significance level of the trend test (a latency's P50, P90 and P99 share it)")
	c.Flags().Float64Var(&so.Drift.MinChange, "min-change", analyze.DefaultDrift.MinChange, "smallest relative change over the run that counts as drift")
	c.RunE = func(cmd *cobra.Command, _ []string) error {
		if err := out.validate(); err != nil {
			return err
		}
		if so.Window <= 0 {
			return usageErrorf("--window: want a positive duration, e.g. 5m")
		}
		if !(so.Drift.Alpha > 0 && so.Drift.Alpha < 1) || !(so.Drift.MinChange >= 0) {
			return usageErrorf("--alpha is a fraction between 0 and 1; --min-change is not negative")
		}
		p, err := plan.Load(file, flags, st.Getenv)
		if err != nil {
			return usageError(err)
		}
		if n := analyze.MinTrendWindows; p.Load.Duration-p.Load.Warmup < time.Duration(n)*so.Window {
			return usageErrorf("--duration minus --warmup holds fewer than %d windows of %s: no trend could be shown", n, so.Window)
		}
		return runExperiment(cmd.Context(), st, out, p, func(ctx context.Context, opts experiment.Options) (*experiment.Outcome, error) {
			return experiment.Soak(ctx, p, opts, so)
		})
	}
	return c
}
