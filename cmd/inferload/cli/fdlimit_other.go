//go:build !unix

package cli

// fileLimit is unknown off Unix.
func fileLimit() (uint64, bool) { return 0, false }
