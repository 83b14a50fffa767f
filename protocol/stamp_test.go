package protocol

import (
	"testing"
	"time"
)

// TestFromKernel: the conversion to the monotonic clock, and the stamps it
// refuses because the wall clock must have been stepped.
func TestFromKernel(t *testing.T) {
	now := time.Now()
	wall := now.UnixNano()
	for _, tc := range []struct {
		name   string
		rx     int64
		ok     bool
		wanLag time.Duration
	}{
		// 20 ms before the read: the event is 20 ms before now.
		{"lag 20ms", wall - int64(20*time.Millisecond), true, 20 * time.Millisecond},
		// No stamp yet: the read keeps now.
		{"none", 0, false, 0},
		// 0.5 ms ahead: rounding between the clocks, lag 0.
		{"ahead 0.5ms", wall + int64(500*time.Microsecond), true, 0},
		// 2 ms ahead: the clock was stepped back.
		{"ahead 2ms", wall + int64(2*time.Millisecond), false, 0},
		// A minute behind: the clock was stepped forward.
		{"behind 1m", wall - int64(time.Minute), false, 0},
	} {
		at, lag, ok := fromKernel(now, tc.rx)
		if ok != tc.ok || lag != tc.wanLag || at.Sub(now) != -tc.wanLag {
			t.Errorf("%s: at now%+v lag %v ok %v, want lag %v ok %v", tc.name, at.Sub(now), lag, ok, tc.wanLag, tc.ok)
		}
	}
}
