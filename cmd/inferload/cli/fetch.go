package cli

import (
	"fmt"
	"net/http"

	"github.com/spf13/cobra"

	"github.com/inferload/inferload/distributed"
)

func newFetchCmd(st *State) *cobra.Command {
	var parent, tokenFile string
	c := &cobra.Command{
		Use:   "fetch COLLECTOR_URL [--out DIR]",
		Short: "Download a distributed run's merged run directory from its collector",
		Long: `Download the merged run directory from a collector (inferload collect)
that has merged its segments and holds (--hold), and unpack it under --out.
It needs nothing in the collector's container but inferload: on Kubernetes,
forward the collector's port and fetch:

  kubectl port-forward svc/inferload-collector 8089 &
  inferload fetch http://127.0.0.1:8089 --collector-token-file token --out runs

The token is the collector's (--collector-token-file, or
$INFERLOAD_COLLECTOR_TOKEN). A run directory that exists already under
--out is never overwritten. The same archive is GET /v1/run.tar (curl -H
"Authorization: Bearer $TOKEN" URL/v1/run.tar | tar -x). See
docs/distributed.md.`,
		Args: cobra.ExactArgs(1),
	}
	c.Flags().StringVar(&parent, "out", "runs", "directory to unpack the run directory in")
	c.Flags().StringVar(&tokenFile, "collector-token-file", "", "file holding the collector's token (default: $"+distributed.TokenEnv+")")
	c.RunE = func(cmd *cobra.Command, args []string) error {
		token, err := distributed.ReadToken(cmd.Context(), tokenFile, st.Getenv(distributed.TokenEnv))
		if err != nil {
			return usageErrorf("--collector-token-file: %v", err)
		}
		ctx, _, release := watchSignals(cmd.Context(), st.Signals)
		defer release()
		dir, err := distributed.FetchRun(ctx, distributed.WithToken(&http.Client{}, token), args[0], parent)
		if err != nil {
			return err
		}
		fmt.Fprintln(st.Stdout, dir)
		return nil
	}
	return c
}
