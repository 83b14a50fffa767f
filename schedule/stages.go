package schedule

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/inferload/inferload/record"
)

// Stage is one stage of a staged run (a single-phase run, a sweep's step
// or a capacity probe are stages too): a constant load held for Duration,
// or a ramp that moves linearly from From to Target over Duration. Target
// is users in a closed loop and requests per second in an open one.
type Stage struct {
	Kind     string // record.StepConstant or record.StepRamp
	Mode     string // record.ModeClosed or record.ModeOpen
	Duration time.Duration
	From     float64
	Target   float64
}

// DefaultGrace is how long a stage's requests still in flight when it
// stops issuing may run before they are canceled, when nothing says
// otherwise. It is part of a stage's timeline, so it lives here, below
// both places that apply it: the plan's default for load.grace and the
// engine's for a zero Config.Grace, one constant so the two cannot drift.
const DefaultGrace = 30 * time.Second

// maxStageUsers stops a typo from starting a million goroutines.
const maxStageUsers = 1_000_000

// ParseStages reads load.stages: "30s@8" holds 8 for 30s; "ramp 30s@32"
// moves from the previous stage's load (0 before the first) to 32. mode
// says whether loads are users or requests per second.
func ParseStages(items []string, mode string) ([]Stage, error) {
	out := make([]Stage, 0, len(items))
	prev := 0.0
	for i, item := range items {
		st, err := parseStage(item, mode, prev)
		if err != nil {
			return nil, &StageError{Index: i, Item: item, Err: err}
		}
		out = append(out, st)
		prev = st.Target
	}
	return out, nil
}

func parseStage(item, mode string, prev float64) (Stage, error) {
	st := Stage{Kind: record.StepConstant, Mode: mode}
	text := strings.TrimSpace(item)
	if rest, ok := strings.CutPrefix(text, "ramp "); ok {
		st.Kind, st.From, text = record.StepRamp, prev, strings.TrimSpace(rest)
	}
	durText, loadText, ok := strings.Cut(text, "@")
	if !ok {
		return st, fmt.Errorf("want DURATION@LOAD, e.g. 30s@8 or ramp 30s@32")
	}
	d, err := time.ParseDuration(strings.TrimSpace(durText))
	if err != nil || d <= 0 {
		return st, fmt.Errorf("%q is not a positive duration (e.g. 30s, 2m)", durText)
	}
	st.Duration = d
	v, err := strconv.ParseFloat(strings.TrimSpace(loadText), 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) || v <= 0 {
		return st, fmt.Errorf("load %q: want a number above 0", loadText)
	}
	if mode == record.ModeClosed && (v != math.Trunc(v) || v > maxStageUsers) {
		return st, fmt.Errorf("load %q: want a whole number of users up to %d", loadText, maxStageUsers)
	}
	st.Target = v
	return st, nil
}

// Describe is a stage in words, for events and progress.
func (s Stage) Describe() string {
	unit := "users"
	if s.Mode == record.ModeOpen {
		unit = "requests/s"
	}
	if s.Kind == record.StepRamp {
		return fmt.Sprintf("ramp from %g to %g %s over %s", s.From, s.Target, unit, s.Duration)
	}
	return fmt.Sprintf("%g %s for %s", s.Target, unit, s.Duration)
}

// StageError is a malformed item of load.stages; plan validation turns it
// into a field error naming the item's line.
type StageError struct {
	Index int    // 0-based position in load.stages
	Item  string // the item as written
	Err   error
}

func (e *StageError) Error() string {
	return fmt.Sprintf("load.stages[%d] %q: %v", e.Index, e.Item, e.Err)
}

func (e *StageError) Unwrap() error { return e.Err }

// SpawnShare is the part of a stage's warm-up over which, by default, a
// closed loop adds the users its load rises by: the last one starts
// half-way through the warm-up, so its first requests are answered, and
// the server has settled at the new load, before the measured window.
const SpawnShare = 0.5

// SpawnRate is the rate, in users per second, at which a stage adds the
// added users its load rises by: rate when set (load.spawn_rate), else
// the added users spread over SpawnShare of warmup. 0 starts them all
// at once: there is no warm-up to spread them over.
//
// Example: 8 → 24 users with a 10 s warm-up adds 16 users over 5 s, 3.2
// users/s: one every 312.5 ms, the first at the stage's start.
func SpawnRate(added int, warmup time.Duration, rate float64) float64 {
	switch {
	case rate > 0:
		return rate
	case added <= 0 || warmup <= 0:
		return 0
	}
	return float64(added) / (SpawnShare * warmup.Seconds())
}
