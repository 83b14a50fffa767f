package cli

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/spf13/cobra"

	"github.com/inferload/inferload/distributed"
	"github.com/inferload/inferload/experiment"
	"github.com/inferload/inferload/plan"
	"github.com/inferload/inferload/schedule"
)

// distFlags are a segment's ties to the rest of a distributed run.
type distFlags struct {
	startAt      string
	collector    string
	tokenFile    string
	startTimeout time.Duration
}

func (d *distFlags) bind(c *cobra.Command) {
	c.Flags().StringVar(&d.startAt, "start-at", "", "start the load at this instant (RFC 3339, e.g. 2026-12-01T20:00:00Z), so the segments of a run on several machines start together; a process more than 1 s late refuses")
	c.Flags().StringVar(&d.collector, "collector", "", "a collector's URL (inferload collect): wait for its common start, stream the run directory to it as it is written, tell it when done (needs --segment)")
	c.Flags().StringVar(&d.tokenFile, "collector-token-file", "", "file holding the collector's token, sent as a bearer header (default: $"+distributed.TokenEnv+")")
	c.Flags().DurationVar(&d.startTimeout, "start-timeout", defaultStartTimeout, "with --collector: how long to wait for the common start, retrying a collector not up yet and waiting for every segment to be ready")
}

// defaultStartTimeout bounds a segment's wait for its start: long enough
// for a collector pod to get its volume and image, and for the other load
// pods to be scheduled, short enough that a segment whose collector never
// comes does not hold its machine for ever.
const defaultStartTimeout = 10 * time.Minute

// uploadEvery is how often a segment streams its new lines to the
// collector: at most about this much is lost with a lost machine.
const uploadEvery = time.Second

// finishTimeout bounds a segment's wait for the collector at the end; the
// run directory keeps everything either way.
const finishTimeout = 30 * time.Second

// attach sets opts for the flags: the start instant (given, or the
// collector's once every segment is ready) and the streaming of the run
// directory. The returned finish sends the last lines and says done; it
// warns rather than fails, since the local run directory is complete.
func (d *distFlags) attach(ctx context.Context, st *State, p *plan.Plan, opts *experiment.Options) (finish func(context.Context), err error) {
	nothing := func(context.Context) {}
	if d.startAt != "" {
		if opts.StartAt, err = time.Parse(time.RFC3339Nano, d.startAt); err != nil {
			return nothing, usageErrorf("--start-at %q: want an RFC 3339 instant like 2026-12-01T20:00:00Z", d.startAt)
		}
	}
	seg, segErr := schedule.ParseSegment(p.Load.Segment)
	if d.collector == "" {
		if segErr == nil && !seg.Whole() && !opts.StartAt.IsZero() {
			opts.TraceRun = sharedTraceRun(p, opts.StartAt)
		}
		return nothing, nil
	}
	if segErr != nil || seg.Whole() {
		return nothing, usageErrorf("--collector needs --segment I/N: the collector gathers the segments of one run")
	}
	if d.startAt != "" {
		return nothing, usageErrorf("--collector gives the start itself: drop --start-at")
	}
	token, err := distributed.ReadToken(ctx, d.tokenFile, st.Getenv(distributed.TokenEnv))
	if err != nil {
		return nothing, usageErrorf("--collector-token-file: %v", err)
	}
	client := distributed.WithToken(&http.Client{Timeout: 10 * time.Second, Transport: distributed.SegmentTransport()}, token)
	startAt, offset, err := d.awaitStart(ctx, st, seg, client, token)
	if err != nil {
		return nothing, err
	}
	opts.StartAt = startAt.Add(-offset.Offset) // the collector's instant on this machine's clock
	opts.TraceRun = sharedTraceRun(p, startAt)
	var up *distributed.Uploader
	var inFlight atomic.Pointer[func() int]
	reportInFlight := opts.InFlight
	opts.InFlight = func(current func() int) {
		inFlight.Store(&current)
		if reportInFlight != nil {
			reportInFlight(current)
		}
	}
	started := opts.Started
	opts.Started = func(dir string) {
		if err := distributed.WriteSegmentInfo(dir, seg, d.collector, offset); err != nil {
			fmt.Fprintf(st.Stderr, "warning: %v\n", err)
		}
		up = distributed.StartUpload(client, d.collector, seg, dir, uploadEvery, func() int {
			if f := inFlight.Load(); f != nil {
				return (*f)()
			}
			return 0
		})
		if started != nil {
			started(dir)
		}
	}
	return func(ctx context.Context) {
		if up == nil {
			return
		}
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), finishTimeout)
		defer cancel()
		if err := up.Finish(ctx); err != nil {
			fmt.Fprintf(st.Stderr, "warning: %v\n", err)
		}
	}, nil
}

// awaitStart measures this machine's clock against the collector's and
// waits for the common start, within --start-timeout: a collector not up
// yet (its pod still waiting for a volume or an image, its Service without
// an endpoint) is tried again with backoff rather than ending the segment.
func (d *distFlags) awaitStart(ctx context.Context, st *State, seg schedule.Segment, client *http.Client, token string) (time.Time, distributed.ClockOffset, error) {
	ctx, cancel := context.WithTimeout(ctx, d.startTimeout)
	defer cancel()
	waiting := func(err error) {
		fmt.Fprintf(st.Stderr, "segment %s: the collector is not up yet (%v); trying again for up to %s\n", seg, err, d.startTimeout)
	}
	var offset distributed.ClockOffset
	err := distributed.Reach(ctx, d.collector, d.startTimeout, func(ctx context.Context) (err error) {
		offset, err = distributed.MeasureClock(ctx, client, d.collector, st.clock().Now)
		return err
	}, waiting)
	if err != nil {
		return time.Time{}, offset, startTimeoutHint(err)
	}
	fmt.Fprintf(st.Stderr, "segment %s: clock %s from the collector's (±%s); waiting at %s for every segment to be ready\n",
		seg, offset.Offset.Round(time.Microsecond), (offset.RTT / 2).Round(time.Microsecond), d.collector)
	// No timeout of its own: the wait lasts until the last segment arrives.
	ready := distributed.WithToken(&http.Client{Transport: distributed.SegmentTransport()}, token)
	var startAt time.Time
	err = distributed.Reach(ctx, d.collector, d.startTimeout, func(ctx context.Context) (err error) {
		startAt, err = distributed.Ready(ctx, ready, d.collector, seg)
		return err
	}, waiting)
	if errors.Is(err, distributed.ErrStartTimeout) {
		err = fmt.Errorf("collector %s: no common start within --start-timeout %s: not every segment said it was ready (GET %s/v1/status says which did)", d.collector, d.startTimeout, strings.TrimRight(d.collector, "/"))
	}
	return startAt, offset, err
}

// startTimeoutHint adds the flag that sets the wait to a segment's give-up.
func startTimeoutHint(err error) error {
	if errors.Is(err, distributed.ErrStartTimeout) {
		return fmt.Errorf("%w (--start-timeout sets the wait)", err)
	}
	return err
}

// sharedTraceRun is the name the segments of one run derive their trace
// ids from: the plan's name and the common start, the same in every
// segment (experiment.Options.TraceRun).
func sharedTraceRun(p *plan.Plan, start time.Time) string {
	return p.Name + "@" + start.UTC().Format(time.RFC3339Nano)
}
