//go:build !unix

package engine

import "time"

// preciseSleep falls back to the runtime's timer where nanosleep is missing.
func preciseSleep(d time.Duration) { time.Sleep(d) }
