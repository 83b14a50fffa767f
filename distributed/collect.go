package distributed

import (
	"context"
	"errors"
	"net"
	"time"
)

// CollectOptions tune Collect.
type CollectOptions struct {
	// OutParent is where the merged run directory is created.
	OutParent string
	// SegmentTimeout is how long, once one segment has finished, the
	// collector waits for the others (a machine lost mid-run never
	// reports done); default 2 minutes.
	SegmentTimeout time.Duration
	// Progress, when set, is called every second with the segments' state.
	Progress func([]SegmentStatus)
}

// Collect serves c on l until every segment has finished (or, once one
// has, SegmentTimeout has passed; or ctx is done), then merges what the
// segments sent into one run directory, exactly as Merge does with the
// segments' own directories. A segment that never finished is merged as
// far as it got: the merged run is then a killed one.
func Collect(ctx context.Context, c *Collector, l net.Listener, o CollectOptions) (*Merged, error) {
	if o.SegmentTimeout <= 0 {
		o.SegmentTimeout = 2 * time.Minute
	}
	serveCtx, stop := context.WithCancel(ctx)
	served := make(chan error, 1)
	go func() { served <- c.Serve(serveCtx, l) }()
	waitSegments(ctx, c, o)
	stop()
	if err := <-served; err != nil {
		return nil, err
	}
	if c.Finished() == 0 && ctx.Err() != nil {
		return nil, errors.New("collector stopped before any segment finished")
	}
	return Merge(c.SegmentDirs(), o.OutParent)
}

// waitSegments returns once every segment is done, the segment timeout
// has run out after the first one was, or ctx is done.
func waitSegments(ctx context.Context, c *Collector, o CollectOptions) {
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	var deadline <-chan time.Time
	for {
		select {
		case <-c.Done():
			return
		case <-ctx.Done():
			return
		case <-deadline:
			return
		case <-tick.C:
			if o.Progress != nil {
				o.Progress(c.Status())
			}
			if deadline == nil && c.Finished() > 0 {
				deadline = time.After(o.SegmentTimeout)
			}
		}
	}
}
