package record

// ClockKernel is Result.Clock for a request whose token events all carried
// the kernel's receive timestamps (docs/metrics.md#two-clocks-for-arrivals); a record
// without a clock was stamped with the user-space clock.
const ClockKernel = "kernel"

// The values of ClientReads.Clock.
const (
	ClockUser  = "user"  // no measured success carried kernel stamps
	ClockMixed = "mixed" // some did
)

// ClientReads says which clock stamped the token events of the measured
// successes, and how late the client read their bytes: the read lag,
// the gap between the kernel receiving a reply's bytes and the client's
// read returning them (docs/metrics.md#read-lag).
type ClientReads struct {
	// Clock is ClockKernel when every measured success with a content
	// event was kernel-stamped, ClockUser when none was, else ClockMixed.
	Clock string `json:"clock"`
	// Kernel and User count those successes by clock.
	Kernel int64 `json:"kernel"`
	User   int64 `json:"user"`
	// ReadLag is the per-request read lag (Result.ReadLagUS: the longest
	// of its content events) over the kernel-stamped successes. The
	// user-space clock cannot see it.
	ReadLag Stats `json:"read_lag_ms"`
}

// readState folds the records' clocks and read lags.
type readState struct {
	lag          *Hist
	kernel, user int64
}

// add counts a measured success that had a content event.
func (rs *readState) add(r *Result) {
	switch {
	case r.Clock == ClockKernel:
		if rs.lag == nil {
			rs.lag = NewHist()
		}
		rs.kernel++
		rs.lag.Record(r.ReadLagUS)
	case r.TTFTUS > 0:
		rs.user++
	}
}

// summary is nil when no success had a content event.
func (rs *readState) summary() *ClientReads {
	if rs.kernel+rs.user == 0 {
		return nil
	}
	cr := &ClientReads{Clock: ClockMixed, Kernel: rs.kernel, User: rs.user}
	switch {
	case rs.user == 0:
		cr.Clock = ClockKernel
	case rs.kernel == 0:
		cr.Clock = ClockUser
	}
	if rs.lag != nil {
		cr.ReadLag = rs.lag.Stats()
	}
	return cr
}
