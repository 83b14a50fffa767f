package cli

import (
	"fmt"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/inferload/inferload/rundir"
)

func newNoteCmd(st *State) *cobra.Command {
	return &cobra.Command{
		Use:   "note RUN_DIR TEXT",
		Short: "Annotate a run (while it goes on, or after) at the current time",
		Long: `Add a manual annotation to RUN_DIR/events.jsonl at the current offset of the
run's clock, e.g. "restarted the server" or "switched to fp8". Reports show
notes on every time chart.`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			e, err := rundir.AppendNote(filepath.Join(args[0], rundir.Events), args[1], st.clock().Now())
			if err != nil {
				return err
			}
			fmt.Fprintf(st.Stdout, "noted at %s: %s\n", time.Duration(e.TimeUS)*time.Microsecond, e.Message)
			return nil
		},
	}
}
