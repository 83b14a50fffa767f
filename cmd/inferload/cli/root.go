package cli

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
)

// Main runs the command line in st and returns the exit code.
func Main(st *State) int {
	root := newRoot(st)
	root.SetArgs(st.Args)
	err := root.ExecuteContext(context.Background())
	if err != nil {
		code := exitCode(err)
		if code != ExitInterrupted {
			fmt.Fprintf(st.Stderr, "inferload: %s\n", strings.TrimSpace(err.Error()))
		}
		if code == ExitError && isFlagError(err) {
			code = ExitUsage
		}
		return code
	}
	return ExitOK
}

func newRoot(st *State) *cobra.Command {
	root := &cobra.Command{
		Use:   "inferload",
		Short: "Load testing and capacity finding for AI inference services",
		Long: `inferload measures LLM inference services the way their users feel them:
TTFT, inter-token latency, TPOT and end-to-end latency distributions, token
throughput, failures by kind, with the client itself kept out of the way.`,
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       st.Version,
	}
	if st.VersionLine != "" {
		root.SetVersionTemplate("inferload version " + st.VersionLine + "\n")
	}
	root.SetOut(st.Stdout)
	root.SetErr(st.Stderr)
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return usageErrorf("%w (see %s --help)", err, c.CommandPath())
	})
	root.AddCommand(newRunCmd(st), newReportCmd(st), newSimCmd(st), newDemoCmd(st), newNoteCmd(st), newSweepCmd(st), newFindCapacityCmd(st), newSoakCmd(st), newExportCmd(st), newCompareCmd(st), newMergeCmd(st), newCollectCmd(st), newFetchCmd(st), newK8sCmd(st), newTruthCmd(st), newUICmd(st), newFleetCmd(st), newCalibrateCmd(st))
	return root
}

// isFlagError recognises cobra's own argument errors, which bypass the
// flag error function.
func isFlagError(err error) bool {
	s := err.Error()
	return strings.HasPrefix(s, "unknown command") || strings.Contains(s, "arg(s)")
}
