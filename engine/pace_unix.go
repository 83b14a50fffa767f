//go:build unix

package engine

import (
	"syscall"
	"time"
)

// preciseSleep blocks the calling OS thread in nanosleep, which wakes within
// tens of microseconds; only the open loop's single dispatcher uses it.
func preciseSleep(d time.Duration) {
	ts := syscall.NsecToTimespec(int64(d))
	_ = syscall.Nanosleep(&ts, nil)
}
