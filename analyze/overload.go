package analyze

// This file: the overload hint, from the client's records alone
// (docs/telemetry.md, "Bottleneck hints").

import (
	"fmt"
	"math"

	"github.com/inferload/inferload/record"
)

// Overload thresholds.
const (
	// OverloadBehind: completions this share below arrivals...
	OverloadBehind = 0.10
	// OverloadSigmas: ...and further below them than this many Poisson
	// standard deviations of the arrival count (√issued), so a short run's
	// scatter is not read as falling behind.
	OverloadSigmas = 3.0
	// OverloadInFlightGrowth and OverloadInFlightMin: in flight in the
	// second half at least this many times the first half's, and at
	// least this many more requests.
	OverloadInFlightGrowth = 1.5
	OverloadInFlightMin    = 2.0
)

// overload fires on an open-loop run whose server cannot keep up:
// completions fell behind arrivals beyond Poisson scatter while the
// number of requests in flight grew between the halves of the window. In
// an open loop arrivals do not wait for replies, so the backlog grows
// for as long as the rate is held; latency then measures the backlog, not
// the server. It needs no server metric: a server whose HTTP threads hold
// the excess before its scheduler sees it reports a short queue
// throughout.
//
// With an in-flight cap the backlog cannot grow in flight: it waits in
// the client. So a run whose late starts Diagnose found server-bound
// (record.ClientTelemetry.ServerBound: the cap held full while the
// client had room) is overloaded on the deficit alone.
func overload(in hintInput) *record.Hint {
	t := in.trend
	if in.s.Mode != record.ModeOpen || !fellBehind(t) {
		return nil
	}
	issued, done := t.Issued/t.WindowS, t.Completed/t.WindowS
	figures := map[string]float64{"issued_per_s": issued, "completed_per_s": done,
		"in_flight_first_half": t.InFlightFirst, "in_flight_second_half": t.InFlightSecond}
	if c := in.s.Client; c != nil && c.ServerBound {
		return &record.Hint{Rule: "overload", Figures: figures,
			Message: fmt.Sprintf("overload: %.2f requests/s arrived but only %.2f/s completed, and the in-flight cap stayed full, so %d requests waited in the client to start; the server cannot serve this rate, so latency grows for as long as it is held: lower the rate or find the knee with a sweep", issued, done, in.s.Requests.Late)}
	}
	if t.InFlightSecond < t.InFlightFirst*OverloadInFlightGrowth || t.InFlightSecond-t.InFlightFirst < OverloadInFlightMin {
		return nil
	}
	return &record.Hint{Rule: "overload", Figures: figures,
		Message: fmt.Sprintf("overload: %.2f requests/s arrived but only %.2f/s completed, and requests in flight grew from %.1f to %.1f on average between the halves of the window; the server cannot serve this rate, so latency grows for as long as it is held: lower the rate or find the knee with a sweep", issued, done, t.InFlightFirst, t.InFlightSecond)}
}

// fellBehind: completions fell short of arrivals by OverloadBehind of
// them and by OverloadSigmas Poisson standard deviations, so the deficit
// is no short run's scatter.
func fellBehind(t record.LoadTrend) bool {
	if t.WindowS <= 0 || t.Issued <= 0 {
		return false
	}
	deficit := t.Issued - t.Completed
	return deficit >= t.Issued*OverloadBehind && deficit >= OverloadSigmas*math.Sqrt(t.Issued)
}
