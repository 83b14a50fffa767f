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
	// Merged, when set, is called with the merged run while the collector
	// still serves it (GET /v1/run.tar): Collect returns once it does, so
	// a caller holding the results for download holds here.
	Merged func(context.Context, *Merged)
}

// Collect serves c on l until every segment has finished (or, once one
// has, SegmentTimeout has passed; or ctx is done), then merges what the
// segments sent into one run directory, exactly as Merge does with the
// segments' own directories. A segment that never finished is merged as
// far as it got: the merged run is then a killed one. The collector
// keeps serving, the merged run directory as GET /v1/run.tar, while
// o.Merged runs.
func Collect(ctx context.Context, c *Collector, l net.Listener, o CollectOptions) (*Merged, error) {
	if o.SegmentTimeout <= 0 {
		o.SegmentTimeout = 2 * time.Minute
	}
	serveCtx, stop := context.WithCancel(ctx)
	served := make(chan error, 1)
	go func() { served <- c.Serve(serveCtx, l) }()
	m, err := gather(ctx, c, o)
	if err == nil {
		c.publish(m.Dir)
		if o.Merged != nil {
			o.Merged(ctx, m)
		}
	}
	stop()
	if serr := <-served; serr != nil {
		return m, errors.Join(err, serr)
	}
	return m, err
}

// gather waits for the segments, stops taking their files and merges
// what they sent.
func gather(ctx context.Context, c *Collector, o CollectOptions) (*Merged, error) {
	waitSegments(ctx, c, o)
	c.seal()
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
