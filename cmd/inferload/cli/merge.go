package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/inferload/inferload/distributed"
)

func newMergeCmd(st *State) *cobra.Command {
	var out outputFlags
	var parent string
	c := &cobra.Command{
		Use:   "merge RUN_DIR... --out DIR",
		Short: "Merge the run directories of a run's segments into one run directory",
		Long: `Merge the run directories that the N segments of one run wrote
(--segment 0/N … N-1/N, the same plan) into one run directory under --out:
every record and event on one clock (the earliest segment's start), and the
summary, steps, verdicts, thresholds and report computed once from all the
records, as for a run from one machine. Percentiles come from the merged
records, never from averaging the segments'.

  inferload merge runs/shard-0/* runs/shard-1/* runs/shard-2/* --out runs/merged

A segment that is missing or of another plan is refused; a segment that was
killed makes the merged run a killed one (its window ends at the last
completion). See docs/distributed.md.`,
		Args: cobra.MinimumNArgs(1),
	}
	out.bind(c)
	c.Flags().StringVar(&parent, "out", "runs", "directory to create the merged run directory in")
	c.RunE = func(cmd *cobra.Command, args []string) error {
		if err := out.validate(); err != nil {
			return err
		}
		m, err := distributed.Merge(args, parent)
		if err != nil {
			return usageError(err)
		}
		if m.Truncated > 0 {
			fmt.Fprintf(st.Stderr, "note: %d segments' last record line was cut short (killed mid-write) and was skipped\n", m.Truncated)
		}
		if err := out.print(st.Stdout, m.Summary); err != nil {
			return err
		}
		if !out.quiet {
			fmt.Fprintf(st.Stderr, "merged %d segments (starts at most %s apart) into %s\n", len(args), m.OffsetBound, m.Dir)
		}
		return thresholdsVerdict(m.Summary)
	}
	return c
}
