package cli

import (
	"fmt"

	"github.com/inferload/inferload/summary"
	"github.com/spf13/cobra"
)

func newReportCmd(st *State) *cobra.Command {
	var out outputFlags
	c := &cobra.Command{
		Use:   "report RUN_DIR",
		Short: "Rebuild summary.json and report.html from a run directory's records and print the summary",
		Long: `Rebuild summary.json and report.html from the records of a run directory,
with figures identical to the live run's, and check the plan's thresholds
again (exit code 99 when one fails). Works on runs that were interrupted or
killed and on damaged records files: every record left is used, and when
records are missing (a killed run, a full disk, a cut or corrupt frame) the
summary's first warning and the message say how many, and the exit code
is 3.`,
		Args: cobra.ExactArgs(1),
	}
	out.bind(c)
	out.exports.bind(c)
	c.RunE = func(cmd *cobra.Command, args []string) error {
		if err := out.validate(); err != nil {
			return err
		}
		res, err := summary.Rebuild(args[0])
		if err != nil {
			return err
		}
		lost := recordsLost(args[0], res.Loss)
		if msg := res.Loss.String(); msg != "" && lost == nil {
			fmt.Fprintf(st.Stderr, "note: %s\n", msg) // damage, but every record the run wrote was read
		}
		if err := out.exports.write(cmd.Context(), st, args[0], res.Summary); err != nil {
			return err
		}
		if err := out.print(st.Stdout, res.Summary); err != nil {
			return err
		}
		if lost != nil {
			// Lost records outrank a threshold verdict drawn without them.
			return lost
		}
		return thresholdsVerdict(res.Summary)
	}
	return c
}
