package analyze

import (
	"fmt"

	"github.com/inferload/inferload/observe"
	"github.com/inferload/inferload/record"
)

// Evidence is what Diagnose reads beside the summary's own figures.
type Evidence struct {
	// Samples are the run's telemetry samples in telemetry.jsonl order;
	// only the measured window's (observe.Measured with Info) count.
	Samples []observe.Sample
	// Info holds the run's clock marks, the measured window among them.
	Info record.RunInfo
	// Trend is the records' load trend over the measured window
	// (record.Aggregate.LoadTrend), for the overload hint.
	Trend record.LoadTrend
	// Load is a single-phase run's intended and achieved load; nil for a
	// staged run, whose steps were each judged by Judge, so the run as a
	// whole gets no validity.
	Load *RunLoad
	// Criteria judge validity, and their confidence backs the sample-size
	// warning; the zero value means the defaults.
	Criteria Criteria
}

// Diagnose gives a run's summary every verdict on its figures, in this
// order: for a single-phase run s.Validity (JudgeRun: the host-busy
// warning reads it), s.Warnings (Warnings, then the telemetry's: client
// saturated (by its telemetry, its late starts or its read lag), host
// contended and what it may explain, then scrape sources that gave
// nothing) and s.Hints (Hints). Call it once the figures are assembled:
// after record.Aggregate.Summary and observe.Summarize (the client
// verdict and hints read s.Client), and before thresholds are evaluated.
// It is a pure function of its inputs, so a rebuild gives the same
// verdicts.
func Diagnose(s *record.Summary, ev Evidence) error {
	measured := observe.Measured(ev.Samples, ev.Info)
	reconcileClient(s, ev.Criteria, ev.Trend)
	reconcileReadLag(s)
	backSessions(s, ev.Criteria.withDefaults().Confidence)
	var judged error
	if ev.Load != nil {
		judged = JudgeRun(s, *ev.Load, ev.Criteria)
	}
	s.Warnings = append(Warnings(s, ev.Criteria), telemetryWarnings(s, measured)...)
	s.Warnings = append(s.Warnings, scrapeWarnings(ev.Samples)...)
	s.Hints = Hints(measured, s, ev.Trend)
	return judged
}

// reconcileClient makes the client verdict agree with the records: an
// open-loop run that started significantly too many requests late
// (TooManyLate, the rule validity applies) could not keep its schedule,
// whatever the client's CPU and scheduling lag said, so its verdict is
// "saturated" and cites the late starts and the pacer lag the report
// charts. Without it the report could say "not saturated" beside a
// pacer-lag chart peaking at 150 ms.
//
// Unless the server set the pace: when the client's own telemetry shows
// room (not saturated by CPU or scheduling lag) and completions fell
// behind arrivals (fellBehind, the overload rule's deficit), the late
// starts waited on the in-flight cap a saturated server held full. The
// verdict then says "not saturated" and names the server, with
// ServerBound set for validity and the overload hint: "run it on a
// bigger machine" would send the reader the wrong way.
func reconcileClient(s *record.Summary, c Criteria, t record.LoadTrend) {
	measured := s.Requests.Succeeded + s.Requests.Failed
	if s.Mode != record.ModeOpen || !TooManyLate(s.Requests.Late, measured, c) {
		return
	}
	if cl := s.Client; cl != nil && !cl.Saturated && fellBehind(t) {
		cl.ServerBound = true
		cl.Verdict = fmt.Sprintf("not saturated, the server was: %d of %d requests (%.1f%%) started late waiting for the in-flight cap while the client had room (CPU max %.0f%% of its CPUs, scheduling lag p99 max %.1f ms); %.2f requests/s arrived and %.2f/s completed, so the cap stayed full of requests the server had not finished",
			s.Requests.Late, measured, 100*float64(s.Requests.Late)/float64(measured), cl.CPUPctMax, cl.SchedLagP99MaxMS,
			t.Issued/t.WindowS, t.Completed/t.WindowS)
		return
	}
	if s.Client == nil {
		s.Client = &record.ClientTelemetry{}
	}
	cl := s.Client
	cl.Saturated = true
	cl.Verdict = fmt.Sprintf("SATURATED: %d of %d requests (%.1f%%) started late, pacer lag max %.0f ms (CPU max %.0f%% of its CPUs, scheduling lag p99 max %.1f ms): the client or its in-flight cap could not keep the schedule",
		s.Requests.Late, measured, 100*float64(s.Requests.Late)/float64(measured), cl.PacerLagMaxMS, cl.CPUPctMax, cl.SchedLagP99MaxMS)
}
