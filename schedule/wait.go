package schedule

import (
	"context"
	"time"
)

// Wait blocks until start+due, the moment a request is due, or until ctx is
// done. It returns at once when that moment has passed (the caller measures
// how late it is), and returns ctx.Err() when ctx is done, even if the
// request is also due, so a stopping run issues nothing more.
//
// The wait uses a timer, never a sleep loop; how close to the due time it
// wakes is up to the Go runtime's timers (typically well under a
// millisecond), which is why the engine records its own lag.
func Wait(ctx context.Context, start time.Time, due time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	d := time.Until(start.Add(due))
	if d <= 0 {
		return nil
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-timer.C:
		return nil
	}
}
