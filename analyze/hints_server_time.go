package analyze

import (
	"fmt"

	"github.com/inferload/inferload/record"
)

// Server-time hint thresholds (docs/telemetry.md, "Bottleneck hints"):
// they read summary.json's server_time, the server's own account of each
// request (in-band timings), so they fire on any server that reports one.
const (
	// QueueDominatesMinMS: a median queue wait shorter than this is not
	// worth a hint, whatever its share.
	QueueDominatesMinMS = 100.0
	// OutsideShare: the share of the median TTFT spent outside the server
	// (before its prefill, beyond any queue it reports) that makes the
	// outside the bottleneck; OutsideMinMS is the least that counts.
	OutsideShare = 0.5
	OutsideMinMS = 50.0
)

// serverTimeBacked reports whether the timed requests back a median at
// the default confidence (the one minimum-samples rule, MinSamples).
func serverTimeBacked(st *record.ServerTimeSummary) bool {
	return st != nil && st.Requests >= int64(MinSamples(0.5, DefaultConfidence))
}

// queueDominates fires when the median request waited longer in the
// server's queue than its prefill and decode took together (and at least
// QueueDominatesMinMS): the server is at its batch limit, and more load
// adds only waiting. Needs a server that reports its queue.
func queueDominates(in hintInput) *record.Hint {
	st := in.s.ServerTime
	if !serverTimeBacked(st) || st.QueueMS == nil || st.QueueMS.Count == 0 {
		return nil
	}
	q, work := st.QueueMS.P50, st.PrefillMS.P50+st.DecodeMS.P50
	if q < QueueDominatesMinMS || q <= work {
		return nil
	}
	return &record.Hint{Rule: "queue_dominates",
		Message: fmt.Sprintf("queueing dominates: by the server's own account the median request waited %.0f ms in its queue against %.0f ms of prefill and %.0f ms of decode; the server is at its batch limit, so more load adds only waiting (find the knee with a sweep)",
			q, st.PrefillMS.P50, st.DecodeMS.P50),
		Figures: map[string]float64{"queue_p50_ms": q, "prefill_p50_ms": st.PrefillMS.P50, "decode_p50_ms": st.DecodeMS.P50}}
}

// outsideServer fires when most of the median TTFT passed outside the
// server (client TTFT minus the server's queue and prefill) and at least
// OutsideMinMS: the network, a gateway, or the server's HTTP layer holding
// requests before they become tasks (llama.cpp's thread pool waiting for
// a slot). A server that reports no queue leaves its queue in this figure,
// and the message says so.
func outsideServer(in hintInput) *record.Hint {
	st := in.s.ServerTime
	ttft := in.s.Metrics.TTFT.P50
	if !serverTimeBacked(st) || ttft <= 0 {
		return nil
	}
	out := st.OutsideMS.P50
	if out < OutsideMinMS || out < OutsideShare*ttft {
		return nil
	}
	where := "the network, a gateway or the server's HTTP layer"
	if st.QueueMS == nil {
		where += "; the server reports no queue time, so its own queue (a request waiting for a slot) is in this figure too"
	}
	return &record.Hint{Rule: "outside_server",
		Message: fmt.Sprintf("time outside the server: %.0f ms of the median TTFT of %.0f ms passed before the server began the prompt (%s)", out, ttft, where),
		Figures: map[string]float64{"outside_p50_ms": out, "ttft_p50_ms": ttft}}
}
