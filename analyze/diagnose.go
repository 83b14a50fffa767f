package analyze

import (
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
	// Load is a single-phase run's intended and achieved load; nil for a
	// staged run, whose steps were each judged by Judge, so the run as a
	// whole gets no validity.
	Load *RunLoad
	// Criteria judge validity, and their confidence backs the sample-size
	// warning; the zero value means the defaults.
	Criteria Criteria
}

// Diagnose gives a run's summary every verdict on its figures, in this
// order: s.Warnings (Warnings, then the telemetry's: client saturated,
// host contended, then scrape sources that gave nothing), s.Hints (Hints) and, for a single-phase run,
// s.Validity (JudgeRun). Call it once the figures are assembled:
// after record.Aggregate.Summary and observe.Summarize (the client
// verdict and hints read s.Client), and before thresholds are evaluated.
// It is a pure function of its inputs, so a rebuild gives the same
// verdicts.
func Diagnose(s *record.Summary, ev Evidence) error {
	measured := observe.Measured(ev.Samples, ev.Info)
	s.Warnings = append(Warnings(s, ev.Criteria), telemetryWarnings(s, measured)...)
	s.Warnings = append(s.Warnings, scrapeWarnings(ev.Samples)...)
	s.Hints = Hints(measured, s)
	if ev.Load == nil {
		return nil
	}
	return JudgeRun(s, *ev.Load, ev.Criteria)
}
