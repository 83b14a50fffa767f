package analyze

import (
	"fmt"

	"github.com/inferload/inferload/record"
)

// The read-lag rule (docs/telemetry.md#client-read-lag): a client whose
// per-request read lag (record.Result.ReadLagUS) has a p90 above
// ReadLagLimitMS, over at least ReadLagMinRequests kernel-stamped measured
// successes, is saturated for measurement purposes, whatever its CPU.
//
// Why 5 ms at p90: it is the accuracy the kernel clock is held to at
// 1,000 streams (BENCHMARKS.md). Past it, one request in ten had bytes
// waiting over 5 ms for the client, so the user-space clock would add that
// much to its TTFT and ITL, and even the kernel clock merges into one read
// (one stamp) tokens that arrive closer together than the lag; a
// closed-loop user also sends its next request that much late. p90, not
// p99, so a few reads delayed by a GC pause or a neighbour on a shared
// host do not condemn a run; 20 requests, so a handful cannot.
const (
	ReadLagLimitMS     = 5.0
	ReadLagMinRequests = 20
)

// LateReader applies the read-lag rule to a run's client reads (nil or on
// the user-space clock: nothing to judge) and says why in one sentence.
func LateReader(cr *record.ClientReads) (late bool, why string) {
	if cr == nil || cr.Kernel < ReadLagMinRequests {
		return false, ""
	}
	lag := cr.ReadLag
	if lag.P90 <= ReadLagLimitMS {
		return false, ""
	}
	return true, fmt.Sprintf("SATURATED: read lag p90 %.1f ms (limit %.0f ms), p99 %.1f ms over %d requests: the client read the replies' bytes late after the kernel had them",
		lag.P90, ReadLagLimitMS, lag.P99, cr.Kernel)
}

// reconcileReadLag makes the client verdict agree with the read lag the
// records carry: a late reader is saturated (LateReader), and a verdict of
// "not saturated" cites the read lag, or says it was not measured.
func reconcileReadLag(s *record.Summary) {
	late, why := LateReader(s.ClientReads)
	if late {
		if s.Client == nil {
			s.Client = &record.ClientTelemetry{}
		}
		cl := s.Client
		if cl.Saturated && cl.Verdict != "" {
			why = cl.Verdict + "; " + why
		} else {
			why += fmt.Sprintf(" (CPU max %.0f%% of its CPUs)", cl.CPUPctMax)
		}
		cl.Saturated, cl.Verdict = true, why
		return
	}
	if s.Client == nil || s.Client.Saturated || s.ClientReads == nil {
		return
	}
	s.Client.Verdict += readLagNote(s.ClientReads)
}

// readLagNote is the read lag a "not saturated" verdict cites.
func readLagNote(cr *record.ClientReads) string {
	if cr.Kernel == 0 {
		return "; read lag not measured (user-space clock)"
	}
	return fmt.Sprintf(", read lag p90 %.1f ms (limit %.0f ms), p99 %.1f ms", cr.ReadLag.P90, ReadLagLimitMS, cr.ReadLag.P99)
}
