package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/inferload/inferload/experiment"
)

func newReportCmd(st *State) *cobra.Command {
	var out outputFlags
	c := &cobra.Command{
		Use:   "report RUN_DIR",
		Short: "Rebuild summary.json and report.html from a run directory's records and print the summary",
		Long: `Rebuild summary.json and report.html from the records of a run directory,
with figures identical to the live run's, and check the plan's thresholds
again (exit code 99 when one fails). Works on runs that were interrupted or
killed: every record flushed before the stop is used.`,
		Args: cobra.ExactArgs(1),
	}
	out.bind(c)
	out.exports.bind(c)
	c.RunE = func(cmd *cobra.Command, args []string) error {
		if err := out.validate(); err != nil {
			return err
		}
		res, err := experiment.Rebuild(args[0])
		if err != nil {
			return err
		}
		if res.TruncatedRecords > 0 {
			fmt.Fprintf(st.Stderr, "note: the last record line was cut short (the run was killed mid-write) and was skipped\n")
		}
		if err := out.exports.write(cmd.Context(), st, args[0], res.Summary); err != nil {
			return err
		}
		if err := out.print(st.Stdout, res.Summary); err != nil {
			return err
		}
		return thresholdsVerdict(res.Summary)
	}
	return c
}
