//go:build unix

package cli

import "syscall"

// fileLimit is the soft RLIMIT_NOFILE.
func fileLimit() (uint64, bool) {
	var r syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &r); err != nil {
		return 0, false
	}
	return uint64(r.Cur), true //nolint:unconvert // int64 on some platforms
}
