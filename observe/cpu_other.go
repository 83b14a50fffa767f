//go:build !unix

package observe

import "time"

// processCPU is unknown off Unix; the CPU series are then absent.
func processCPU() (time.Duration, bool) { return 0, false }
