package analyze

import (
	"fmt"

	"github.com/inferload/inferload/record"
)

// The read-lag rule (docs/telemetry.md#client-read-lag): a client whose
// per-request read lag (record.Result.ReadLagUS) has a p90 above both
// ReadLagLimitMS and the run's median ITL, over at least
// ReadLagMinRequests kernel-stamped measured successes, is saturated for
// measurement purposes, whatever its CPU.
//
// Why: the kernel clock keeps every token's stamp true as long as the
// client reads each token before the next one arrives. A client later
// than the gap between tokens finds several in one read, and the kernel
// has merged their segments under the latest one's stamp, so the earlier
// tokens are stamped late: TTFT grows and ITL shrinks by up to the lag.
// Once one request in ten (p90) waited longer than the median gap, and
// longer than 5 ms (the accuracy the kernel clock is held to at 1,000
// streams, BENCHMARKS.md; it is also the whole rule for replies without
// gaps), the figures are the client's. p90, not p99, so a few reads held
// up by a GC pause or a neighbour on a shared host do not condemn a run;
// 20 requests, so a handful cannot.
const (
	ReadLagLimitMS     = 5.0
	ReadLagMinRequests = 20
)

// LateReader applies the read-lag rule to a run's client reads (nil or on
// the user-space clock: nothing to judge) and its median ITL in ms, and
// says why in one sentence.
func LateReader(cr *record.ClientReads, itlP50MS float64) (late bool, why string) {
	if cr == nil || cr.Kernel < ReadLagMinRequests {
		return false, ""
	}
	lag, limit := cr.ReadLag, max(ReadLagLimitMS, itlP50MS)
	if lag.P90 <= limit {
		return false, ""
	}
	return true, fmt.Sprintf("SATURATED: read lag p90 %.1f ms (limit %.1f ms: 5 ms or the median ITL, whichever is longer), p99 %.1f ms over %d requests: the client read the replies' bytes so late that tokens shared a read",
		lag.P90, limit, lag.P99, cr.Kernel)
}

// reconcileReadLag makes the client verdict agree with the read lag the
// records carry: a late reader is saturated (LateReader), and a verdict of
// "not saturated" cites the read lag, or says it was not measured.
func reconcileReadLag(s *record.Summary) {
	late, why := LateReader(s.ClientReads, s.Metrics.ITL.P50)
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
	// The limit is not cited: it depends on the ITL, which the verdict's
	// reader sees beside it.
	if cr.Kernel == 0 {
		return "; read lag not measured (user-space clock)"
	}
	return fmt.Sprintf(", read lag p90 %.1f ms, p99 %.1f ms", cr.ReadLag.P90, cr.ReadLag.P99)
}
