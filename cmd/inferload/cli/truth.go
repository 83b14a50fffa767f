package cli

import (
	"errors"

	"github.com/spf13/cobra"

	"github.com/inferload/inferload/analyze"
	"github.com/inferload/inferload/report"
)

func newTruthCmd(st *State) *cobra.Command {
	var o analyze.TruthOptions
	c := &cobra.Command{
		Use:   "truth",
		Short: "Run every verdict on scenarios whose truth is known and print verdict against truth (TRUTH.md)",
		Long: `Run the truth suite: the bottleneck hints, the client verdict, the
overload hint, validity, the knee and compare on scenarios whose truth is
known by construction (constructed telemetry, load trends and steps, and
compare pairs drawn from known distributions by seed), and print a Markdown
table of verdict against truth, with compare's A/A false-regression rate and
planted-10% detection rate beside their targets. Deterministic for a seed;
takes a few seconds. Exit 1 when a row does not match or a target is missed.`,
		Example: `  inferload truth > TRUTH-table.md
  inferload truth --pairs 100 --seed 7`,
		Args: cobra.NoArgs,
	}
	c.Flags().IntVar(&o.Pairs, "pairs", 40, "compare pairs per planted change (at least 20)")
	c.Flags().Uint64Var(&o.Seed, "seed", 0, "seed of the compare pairs")
	c.Flags().IntVar(&o.Requests, "requests", analyze.TruthRequests, "requests per run of the planted compare pairs (shorter runs catch less)")
	c.RunE = func(cmd *cobra.Command, _ []string) error {
		if o.Pairs < 20 {
			return usageErrorf("--pairs %d: the targets are stated over at least 20 pairs", o.Pairs)
		}
		if o.Requests < 100 || o.Requests > 1_000_000 {
			return usageErrorf("--requests %d: want 100 to 1000000", o.Requests)
		}
		r := analyze.Truth(o)
		if err := report.WriteTruth(st.Stdout, r); err != nil {
			return err
		}
		if !r.OK() {
			return errors.New("truth suite: a verdict disagrees with its truth or a target is missed")
		}
		return nil
	}
	return c
}
