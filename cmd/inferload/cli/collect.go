package cli

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/inferload/inferload/distributed"
	"github.com/inferload/inferload/internal/httpguard"
	"github.com/inferload/inferload/report"
)

// collectStamp names the default gathering directory by its UTC start,
// as run directories are named.
const collectStamp = "20060102T150405Z"

func newCollectCmd(st *State) *cobra.Command {
	var out outputFlags
	var ui uiFlags
	var listen, dir, parent, addrFile, tokenFile string
	var segments int
	var timeout, hold time.Duration
	c := &cobra.Command{
		Use:   "collect --listen ADDR --segments N",
		Short: "Gather a distributed run's segments as they run, start them together, merge them",
		Long: `Serve the collector of a run spread over N machines: each segment
(inferload run --segment I/N --collector http://ADDR) says it is ready and
waits; once all N are, they get one start instant; each then streams its run
directory as it is written (a lost machine loses about its last second).
The progress line and, with --ui, the live page show the whole run as the
lines arrive, with a table of the segments. Once every segment is done (or
--segment-timeout after the first one is), the segments are merged into one
run directory under --out exactly as inferload merge does, the summary is
printed and the thresholds, checked on the merged data, set the exit code.
Every call to the collector needs its token, which the segments send:
--token-file or $INFERLOAD_COLLECTOR_TOKEN (required beyond loopback); on
loopback without one, the collector makes one and writes it, readable by
you only, to collector.token in its --dir for --collector-token-file. See
docs/distributed.md.`,
		Args: cobra.NoArgs,
	}
	out.bind(c)
	ui.bind(c)
	c.Flags().StringVar(&listen, "listen", "127.0.0.1:8089", "address to serve the collector on")
	c.Flags().StringVar(&addrFile, "addr-file", "", "write the address the collector listens on to this file (with --listen HOST:0)")
	c.Flags().IntVar(&segments, "segments", 0, "how many segments make the run (N of --segment I/N)")
	c.Flags().StringVar(&dir, "dir", "", "directory to gather the segments' files in (default: a new collect-TIME directory under --out)")
	c.Flags().StringVar(&parent, "out", "runs", "directory to create the merged run directory in")
	c.Flags().StringVar(&tokenFile, "token-file", "", "file holding the token segments must send (default: $"+distributed.TokenEnv+"; on loopback without one, a token is made and written to DIR/"+distributed.TokenFile+")")
	c.Flags().DurationVar(&timeout, "segment-timeout", 2*time.Minute, "once one segment is done, how long to wait for the others")
	c.Flags().DurationVar(&hold, "hold", 0, "after merging, stay up this long, serving the merged run for inferload fetch")
	c.RunE = func(cmd *cobra.Command, _ []string) error {
		if err := out.validate(); err != nil {
			return err
		}
		if segments < 1 {
			return usageErrorf("--segments: want the number of segments, at least 1")
		}
		token, err := distributed.ReadToken(cmd.Context(), tokenFile, st.Getenv(distributed.TokenEnv))
		if err != nil {
			return usageErrorf("--token-file: %v", err)
		}
		if dir == "" {
			dir = filepath.Join(parent, "collect-"+st.clock().Now().UTC().Format(collectStamp))
		}
		l, err := net.Listen("tcp", listen)
		if err != nil {
			return usageErrorf("--listen %s: %v", listen, err)
		}
		if why := distributed.NeedsToken(l.Addr()); why != "" && token == "" {
			l.Close()
			return usageErrorf("--listen: %s", why)
		}
		view := newCollectView(segments, st.clock().Now)
		var feed *distributed.Feed
		if !out.quiet || ui.listen != "" {
			// Quiet and without a page nothing shows the live view: the
			// collector then only appends (BENCHMARKS.md has both costs).
			feed = view.feed()
		}
		madeToken := token == ""
		if madeToken {
			// On loopback too every call needs a token: any local user of
			// a shared host reaches the port. One is made and left for the
			// segments in a file only this user can read.
			if token, err = httpguard.NewToken(); err != nil {
				l.Close()
				return err
			}
		}
		col, err := distributed.NewCollector(distributed.CollectorConfig{Segments: segments, Dir: dir, Now: st.clock().Now, Token: token, Feed: feed})
		if err != nil {
			l.Close()
			return err
		}
		view.col = col
		tokenPath := filepath.Join(dir, distributed.TokenFile)
		if madeToken {
			if err := os.WriteFile(tokenPath, []byte(token+"\n"), 0o600); err != nil {
				l.Close()
				return err
			}
		}
		if addrFile != "" {
			if err := os.WriteFile(addrFile, []byte(l.Addr().String()+"\n"), 0o644); err != nil {
				l.Close()
				return err
			}
		}
		ctx, _, release := watchSignals(cmd.Context(), st.Signals)
		defer release()
		closeUI, err := view.serveUI(st, &ui)
		if err != nil {
			l.Close()
			return err
		}
		if !out.quiet {
			url, note := httpguard.BrowseURL(l.Addr())
			fmt.Fprintf(st.Stderr, "collecting %d segments on %s into %s\n", segments, strings.TrimSuffix(url, "/"), dir)
			if note != "" {
				fmt.Fprintf(st.Stderr, "(%s)\n", note)
			}
			if madeToken {
				fmt.Fprintf(st.Stderr, "segments send its token: --collector-token-file %s\n", tokenPath)
			}
		}
		bar := report.NewProgress(st.Stderr, false)
		progress := func([]distributed.SegmentStatus) {
			snap := view.tick()
			if out.quiet {
				return
			}
			for _, line := range view.changes() {
				fmt.Fprintln(st.Stderr, line)
			}
			bar.Update(snap)
		}
		var printErr error
		merged := func(ctx context.Context, m *distributed.Merged) {
			progress(nil) // the segments' last changes
			if printErr = out.print(st.Stdout, m.Summary); printErr != nil {
				return
			}
			if !out.quiet {
				fmt.Fprintf(st.Stderr, "merged %d segments (starts at most %s apart) into %s\n", segments, m.OffsetBound, m.Dir)
			}
			if hold > 0 {
				// The collector serves the merged run meanwhile: a pod's
				// image has no tar for kubectl cp.
				fmt.Fprintf(st.Stderr, "holding for %s: inferload fetch URL (or GET %s) downloads the run (Ctrl-C ends it)\n", hold, distributed.RunTarPath)
				st.clock().SleepUntil(ctx, st.clock().Now().Add(hold))
			}
		}
		m, err := distributed.Collect(ctx, col, l, distributed.CollectOptions{OutParent: parent, SegmentTimeout: timeout, Progress: progress, Merged: merged})
		if err == nil {
			err = printErr
		}
		if err != nil {
			if m == nil {
				progress(nil) // merged never ran to print the last changes
			}
			closeUI(ctx, m, err)
			return err
		}
		if err := closeUI(ctx, m, nil); err != nil {
			return err
		}
		return thresholdsVerdict(m.Summary)
	}
	return c
}
