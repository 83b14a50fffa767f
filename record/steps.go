package record

import "fmt"

// Step is one stage of a staged run or sweep: its load and the figures of
// its own measured window (its warm-up excluded), with the same meanings
// as the run's.
type Step struct {
	// Index is the 1-based stage number, the records' step field.
	Index int `json:"index"`
	// Kind is StepConstant or StepRamp.
	Kind string `json:"kind"`
	// Mode is ModeClosed (Target is users) or ModeOpen (requests/s).
	Mode   string  `json:"mode"`
	Target float64 `json:"target"`
	// From is a ramp's starting load; 0 for a constant step.
	From float64 `json:"from,omitempty"`
	// StartS is the stage's start on the run clock, in seconds.
	StartS  float64 `json:"start_s"`
	WindowS float64 `json:"window_s"`

	Requests    Requests         `json:"requests"`
	FailureRate float64          `json:"failure_rate"`
	Errors      map[string]int64 `json:"errors"`
	Metrics     Metrics          `json:"metrics"`
	Throughput  Throughput       `json:"throughput"`
	// GoodputPerS is measured requests per second that met every SLO; with
	// no SLO it counts every success.
	GoodputPerS float64 `json:"goodput_per_s"`
	// ServerTime is where the step's time went by the server's account,
	// from the step's own records (with their joined spans); nil when no
	// reply of the step carried server timings.
	ServerTime *ServerTimeSummary `json:"server_time,omitempty"`
	// Accuracy is how the step's graded replies fared; nil when none was
	// graded (grading.go).
	Accuracy *Accuracy `json:"accuracy,omitempty"`
	Validity Validity  `json:"validity"`
	Warnings []string  `json:"warnings"`
}

// The kinds of a stage.
const (
	StepConstant = "step" // constant load for the stage's duration
	StepRamp     = "ramp" // load moves linearly from From to Target
)

// Validity says whether a step's figures can be trusted as they are.
type Validity struct {
	// Valid is false when a reason makes the step unusable; an invalid
	// step is never used for the knee.
	Valid bool `json:"valid"`
	// Reasons are plain sentences about what is wrong or weak, in a fixed
	// order; empty when there is nothing to say.
	Reasons []string `json:"reasons"`
	// Kinds names each reason's rule, one per reason in the same order
	// (the Invalid* constants), so a verdict can tell a step cut short
	// from one whose client fell behind without reading the sentences.
	Kinds []string `json:"kinds"`
	// Percentiles maps each latency metric to the highest reported
	// percentile its sample count backs ("p99"), or "none".
	Percentiles map[string]string `json:"percentiles"`
	// AchievedLoad is the load actually applied, in Target's unit.
	AchievedLoad float64 `json:"achieved_load"`
	// ClientSaturated is true when the client itself could not send on time.
	ClientSaturated bool `json:"client_saturated"`
	// Classes maps each request class to what its own sample counts back,
	// as Percentiles does for the whole (single-phase runs only): a P99
	// overall can rest on a class with too few requests for its own.
	Classes map[string]map[string]string `json:"classes,omitempty"`
}

// The kinds of a validity reason (Validity.Kinds), one per rule that can
// make a step invalid.
const (
	InvalidSamples         = "samples"          // too few successes to back the percentile the knee reads
	InvalidLoad            = "load"             // achieved load below the intended one
	InvalidLate            = "late"             // the client or its in-flight cap started requests late
	InvalidServerBound     = "server_bound"     // late starts waiting on a cap the server held full
	InvalidClientFailed    = "client_failed"    // requests failed in the load generator (descriptors, ports)
	InvalidClientSaturated = "client_saturated" // telemetry found the load generator saturated
	InvalidSegmentLate     = "segment_late"     // one segment of a merged run started too many late
	InvalidUnsteady        = "unsteady"         // replies/s or median TTFT trended through the window
)

// Invalidate makes v invalid for reason, a sentence, under the rule kind
// (an Invalid* constant), keeping Reasons and Kinds in step.
func (v *Validity) Invalidate(kind, reason string) {
	v.Valid = false
	v.Reasons = append(v.Reasons, reason)
	v.Kinds = append(v.Kinds, kind)
}

// Knee is where throughput stopped growing while latency rose
// (docs/experiments.md has the method).
type Knee struct {
	Found bool `json:"found"`
	// Load is the knee in users or requests/s (Mode); 0 when not found.
	Load float64 `json:"load"`
	Mode string  `json:"mode"`
	// Recommended is the suggested operating point: OperatingFraction ×
	// Load, rounded down to whole users in a closed loop (at least 1).
	Recommended float64 `json:"recommended"`
	// Reason says in words why this is the knee, or why none was found.
	Reason string `json:"reason"`
	// Evidence are the indexes of the two neighbouring steps compared.
	Evidence []int `json:"evidence"`
	// ThroughputGain and LatencyGrowth are the thresholds used (fractions
	// per step); OperatingFraction gave Recommended.
	ThroughputGain    float64 `json:"throughput_gain"`
	LatencyGrowth     float64 `json:"latency_growth"`
	OperatingFraction float64 `json:"operating_fraction"`
}

// OperatingPoint is a sweep's answer to "at what load should this
// serve": with objectives (the plan's goodput SLOs or --slo), the
// highest step at which every one held, the sweep's Capacity; without,
// the knee's Recommended.
type OperatingPoint struct {
	Found bool `json:"found"`
	// Load is in users or requests/s (Mode); 0 when not found.
	Load float64 `json:"load"`
	Mode string  `json:"mode"`
	// Basis is what chose it: OperatingSLO or OperatingKnee.
	Basis string `json:"basis"`
	// Reason says it in words, with what to run next.
	Reason string `json:"reason"`
}

// The bases of an operating point.
const (
	OperatingSLO  = "slo"  // the highest step at which every objective held
	OperatingKnee = "knee" // a fraction of the knee: no objective was declared
)

// Capacity is a capacity search's answer: the highest load at which every
// SLO held at the stated confidence, with every probe (the probes' own
// figures are the run's steps, by index).
type Capacity struct {
	Found bool `json:"found"`
	// Load is the answer in users or requests/s (Mode); 0 when even the
	// lowest probe failed.
	Load       float64 `json:"load"`
	Mode       string  `json:"mode"`
	Confidence float64 `json:"confidence"`
	// SLOs are the objectives, as written ("TTFT p99 ≤ 2s").
	SLOs           []string `json:"slos"`
	MaxFailureRate float64  `json:"max_failure_rate"`
	// Reason says the answer in words.
	Reason string `json:"reason"`
	// Confirm is how many times the search was to probe its answer
	// again (find-capacity --confirm); Confirmations how many of those
	// passed at Load. The answer is confirmed when they are equal, and
	// unconfirmed when the probe budget or an interruption ended the
	// search first.
	Confirm       int             `json:"confirm,omitempty"`
	Confirmations int             `json:"confirmations,omitempty"`
	Probes        []CapacityProbe `json:"probes"`
}

// CapacityProbe is one probe of a capacity search.
type CapacityProbe struct {
	// Step is the probe's index in steps.
	Step   int     `json:"step"`
	Load   float64 `json:"load"`
	Passed bool    `json:"passed"`
	// Reasons give each SLO's verdict, the failure rate's and validity's.
	Reasons []string `json:"reasons"`
	// NoVerdict marks a sweep's step that neither met nor missed: no
	// objective was shown missed, but one could not be shown to hold (too
	// few samples) or the step is invalid. It is left out of the answer.
	// A search's probe is never without a verdict: it fails.
	NoVerdict bool `json:"no_verdict,omitempty"`
	// Confirmation marks a probe at a load the search had probed
	// before: a second look at an answer (find-capacity --confirm).
	Confirmation bool `json:"confirmation,omitempty"`
}

// Verdicts are the loads of c's probes that passed and of those that
// failed, in order; a probe without a verdict is in neither.
func (c *Capacity) Verdicts() (passed, failed []float64) {
	for _, p := range c.Probes {
		switch {
		case p.NoVerdict:
		case p.Passed:
			passed = append(passed, p.Load)
		default:
			failed = append(failed, p.Load)
		}
	}
	return passed, failed
}

// Soak is a soak run's windowed figures and their drift over time.
type Soak struct {
	// WindowS is each window's length in seconds.
	WindowS float64      `json:"window_s"`
	Windows []SoakWindow `json:"windows"`
	// Drift tests each windowed figure for a trend.
	Drift []Drift `json:"drift"`
}

// SoakWindow is one window of a soak: measured requests that completed
// inside it (a request sent in one window and finished in the next counts
// in the next).
type SoakWindow struct {
	StartS       float64 `json:"start_s"`
	Requests     int64   `json:"requests"`
	RequestsPerS float64 `json:"requests_per_s"`
	FailureRate  float64 `json:"failure_rate"`
	TTFTP99      float64 `json:"ttft_p99_ms"`
	E2EP99       float64 `json:"e2e_p99_ms"`
	// TTFTBacked and E2EBacked are the highest percentile the window's
	// values of each latency back (the minimum-samples rule at 95%,
	// docs/metrics.md; "none" when too few for a P50): a window with
	// fewer than 299 values still has a P99, but not one to read as such.
	TTFTBacked string `json:"ttft_backed"`
	E2EBacked  string `json:"e2e_backed"`
}

// Drift is the trend test of one windowed figure.
type Drift struct {
	Metric string `json:"metric"`
	// Tested is false when the soak held too few windows (for a
	// quantile: too few backed windows); Verdict then says what would
	// test it, and the figures below are 0.
	Tested bool `json:"tested"`
	// Change is the fitted change from the first window to the last,
	// relative to the fitted start (0.38: rose 38%), absolute for the
	// failure rate; ChangeLow and ChangeHigh bound it at Level.
	Change     float64 `json:"change"`
	ChangeLow  float64 `json:"change_low"`
	ChangeHigh float64 `json:"change_high"`
	Level      float64 `json:"level"`
	PValue     float64 `json:"p_value"`
	// Alpha is the level the test was run at (--alpha split over the
	// latency's tested quantiles).
	Alpha       float64 `json:"alpha"`
	Significant bool    `json:"significant"`
	// Drifted is Significant with a change of at least the minimum.
	Drifted bool `json:"drifted"`
	// Windows is how many windows were tested; for a quantile,
	// NeededSamples is the values each window must hold and
	// WindowMinSamples the fewest one held.
	Windows          int    `json:"windows"`
	NeededSamples    int    `json:"needed_samples,omitempty"`
	WindowMinSamples int64  `json:"window_min_samples,omitempty"`
	Verdict          string `json:"verdict"`
}

// LoadText is a load with its unit, as verdicts and events print it:
// "1 user", "8 users", "2.5 requests/s".
func LoadText(v float64, mode string) string {
	if mode == ModeOpen {
		return fmt.Sprintf("%.4g requests/s", v)
	}
	if v == 1 {
		return "1 user"
	}
	return fmt.Sprintf("%.4g users", v)
}
