package sim

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Faults makes a fraction of requests misbehave the way real servers and
// the proxies in front of them do, so the load generator's error handling
// can be tested. Each fraction is of all requests; at most one fault hits a
// request, so the fractions must sum to at most 1. Which request gets which
// fault is drawn from the server's seed and the request's arrival number,
// so a run with the same seed and arrival order is reproducible.
type Faults struct {
	// Status answers a fraction of requests at once with an HTTP error
	// status (400–599) and an OpenAI-style error body, e.g. {503: 0.05}.
	Status map[int]float64 `yaml:"status"`
	// Reset sends part of a stream, then resets the TCP connection (RST).
	// A non-streaming reply is reset before any byte is sent.
	Reset float64 `yaml:"reset"`
	// Malformed sends one chunk that is not valid JSON mid-stream, then
	// carries on; a non-streaming reply gets a truncated JSON body.
	Malformed float64 `yaml:"malformed"`
	// Stall pauses a stream for Duration mid-way, then carries on; a
	// non-streaming reply is held back that long.
	Stall DelayFault `yaml:"stall"`
	// SlowFirstByte holds the request for Duration before the server
	// starts on it, so nothing is sent for at least that long.
	SlowFirstByte DelayFault `yaml:"slow_first_byte"`
	// MissingDone ends a stream normally but without "data: [DONE]".
	MissingDone float64 `yaml:"missing_done"`
	// ErrorEvent sends an error object inside the stream mid-way, then
	// "data: [DONE]", as vLLM does when generation fails; a non-streaming
	// request gets a 500 instead.
	ErrorEvent float64 `yaml:"error_event"`
	// AnswerDegrade answers some graded requests wrongly past a load
	// (answer.go); unlike the faults above it is drawn on its own, not
	// from the shared fractions.
	AnswerDegrade AnswerDegrade `yaml:"answer_degrade"`
}

// DelayFault is a fault that holds things up for Duration (wall-clock time,
// not scaled by Config.Speedup).
type DelayFault struct {
	// Fraction of requests affected.
	Fraction float64 `yaml:"fraction"`
	// Duration of the delay.
	Duration time.Duration `yaml:"duration"`
}

// FaultKind names one kind of injected fault.
type FaultKind int

// The fault kinds, in the order Faults.Pick lays out their fractions.
const (
	FaultNone FaultKind = iota
	FaultStatus
	FaultReset
	FaultMalformed
	FaultStall
	FaultSlowFirstByte
	FaultMissingDone
	FaultErrorEvent
)

var faultNames = [...]string{"none", "status", "reset", "malformed", "stall", "slow_first_byte", "missing_done", "error_event"}

// String returns the kind's flag name.
func (k FaultKind) String() string {
	if k < 0 || int(k) >= len(faultNames) {
		return "FaultKind(" + strconv.Itoa(int(k)) + ")"
	}
	return faultNames[k]
}

// Fault is the fault chosen for one request.
type Fault struct {
	// Kind is FaultNone for a request left alone.
	Kind FaultKind
	// Status is the HTTP status for FaultStatus.
	Status int
	// Delay is the hold-up for FaultStall and FaultSlowFirstByte.
	Delay time.Duration
}

// IsZero reports whether no fault is configured.
func (f Faults) IsZero() bool { return f.total() == 0 && f.AnswerDegrade.WrongShare == 0 }

func (f Faults) total() float64 {
	sum := f.Reset + f.Malformed + f.Stall.Fraction + f.SlowFirstByte.Fraction + f.MissingDone + f.ErrorEvent
	for _, v := range f.Status {
		sum += v
	}
	return sum
}

// Pick maps a uniform draw u in [0,1) to a fault: the fractions are laid
// end to end (status codes ascending, then the kinds in FaultKind order)
// and u falls in one of them or past them all (no fault).
func (f Faults) Pick(u float64) Fault {
	for _, code := range slices.Sorted(maps.Keys(f.Status)) {
		if u -= f.Status[code]; u < 0 {
			return Fault{Kind: FaultStatus, Status: code}
		}
	}
	steps := []struct {
		frac  float64
		fault Fault
	}{
		{f.Reset, Fault{Kind: FaultReset}},
		{f.Malformed, Fault{Kind: FaultMalformed}},
		{f.Stall.Fraction, Fault{Kind: FaultStall, Delay: f.Stall.Duration}},
		{f.SlowFirstByte.Fraction, Fault{Kind: FaultSlowFirstByte, Delay: f.SlowFirstByte.Duration}},
		{f.MissingDone, Fault{Kind: FaultMissingDone}},
		{f.ErrorEvent, Fault{Kind: FaultErrorEvent}},
	}
	for _, s := range steps {
		if u -= s.frac; u < 0 {
			return s.fault
		}
	}
	return Fault{}
}

// Validate reports a fraction out of [0,1], a status that is not an HTTP
// error, a delay fault without a duration, or fractions summing above 1.
func (f Faults) Validate() error {
	for code, v := range f.Status {
		if code < 400 || code > 599 {
			return fmt.Errorf("status %d is not an HTTP error status (400-599)", code)
		}
		if err := checkFraction("status"+strconv.Itoa(code), v); err != nil {
			return err
		}
	}
	plain := []struct {
		name string
		v    float64
	}{{"reset", f.Reset}, {"malformed", f.Malformed}, {"missing_done", f.MissingDone}, {"error_event", f.ErrorEvent}}
	for _, p := range plain {
		if err := checkFraction(p.name, p.v); err != nil {
			return err
		}
	}
	delays := []struct {
		name string
		d    DelayFault
	}{{"stall", f.Stall}, {"slow_first_byte", f.SlowFirstByte}}
	for _, d := range delays {
		if err := checkFraction(d.name, d.d.Fraction); err != nil {
			return err
		}
		if d.d.Fraction > 0 && d.d.Duration <= 0 {
			return fmt.Errorf("%s needs a duration > 0 (e.g. %s=%g:5s)", d.name, d.name, d.d.Fraction)
		}
	}
	if err := f.AnswerDegrade.validate(); err != nil {
		return err
	}
	if t := f.total(); t > 1+1e-9 {
		return fmt.Errorf("fault fractions sum to %g; at most one fault hits a request, so the sum must be <= 1", t)
	}
	return nil
}

func checkFraction(name string, v float64) error {
	if v < 0 || v > 1 {
		return fmt.Errorf("%s fraction must be in [0,1], got %g", name, v)
	}
	return nil
}

func (f Faults) clone() Faults {
	f.Status = maps.Clone(f.Status)
	return f
}

// ParseFaults reads the compact flag form, a comma-separated list of
// NAME=FRACTION, with :DURATION for the delay faults:
//
//	status503=0.05,status429=0.01,reset=0.01,malformed=0.01,
//	stall=0.02:5s,slow_first_byte=0.01:2s,missing_done=0.01,error_event=0.01
//
// An empty string or "none" means no faults.
func ParseFaults(s string) (Faults, error) {
	var f Faults
	s = strings.TrimSpace(s)
	if s == "" || s == "none" {
		return f, nil
	}
	for item := range strings.SplitSeq(s, ",") {
		if err := f.parseItem(strings.TrimSpace(item)); err != nil {
			return Faults{}, fmt.Errorf("faults %q: %w", item, err)
		}
	}
	if err := f.Validate(); err != nil {
		return Faults{}, fmt.Errorf("faults: %w", err)
	}
	return f, nil
}

func (f *Faults) parseItem(item string) error {
	name, val, ok := strings.Cut(item, "=")
	if !ok {
		return errors.New("want NAME=FRACTION")
	}
	if code, isStatus := strings.CutPrefix(name, "status"); isStatus {
		return f.parseStatus(code, val)
	}
	var dst *float64
	var delay *DelayFault
	switch name {
	case "reset":
		dst = &f.Reset
	case "malformed":
		dst = &f.Malformed
	case "missing_done":
		dst = &f.MissingDone
	case "error_event":
		dst = &f.ErrorEvent
	case "stall":
		delay = &f.Stall
	case "slow_first_byte":
		delay = &f.SlowFirstByte
	default:
		return fmt.Errorf("unknown fault %q; valid: statusNNN, reset, malformed, stall, slow_first_byte, missing_done, error_event", name)
	}
	if delay != nil {
		return parseDelay(delay, val)
	}
	return parseFraction(dst, val)
}

func (f *Faults) parseStatus(code, val string) error {
	n, err := strconv.Atoi(code)
	if err != nil {
		return fmt.Errorf("status fault needs a code, e.g. status503=0.05: %w", err)
	}
	var frac float64
	if err := parseFraction(&frac, val); err != nil {
		return err
	}
	if f.Status == nil {
		f.Status = make(map[int]float64)
	}
	f.Status[n] = frac
	return nil
}

func parseFraction(dst *float64, val string) error {
	v, err := strconv.ParseFloat(val, 64)
	if err != nil {
		return fmt.Errorf("fraction: %w", err)
	}
	*dst = v
	return nil
}

func parseDelay(dst *DelayFault, val string) error {
	frac, dur, ok := strings.Cut(val, ":")
	if !ok {
		return errors.New("want FRACTION:DURATION, e.g. 0.02:5s")
	}
	if err := parseFraction(&dst.Fraction, frac); err != nil {
		return err
	}
	d, err := time.ParseDuration(dur)
	if err != nil {
		return fmt.Errorf("duration: %w", err)
	}
	dst.Duration = d
	return nil
}

// String renders f in the form ParseFaults reads ("none" when empty).
func (f Faults) String() string {
	var parts []string
	for _, code := range slices.Sorted(maps.Keys(f.Status)) {
		parts = append(parts, fmt.Sprintf("status%d=%g", code, f.Status[code]))
	}
	add := func(name string, v float64) {
		if v > 0 {
			parts = append(parts, fmt.Sprintf("%s=%g", name, v))
		}
	}
	addDelay := func(name string, d DelayFault) {
		if d.Fraction > 0 {
			parts = append(parts, fmt.Sprintf("%s=%g:%s", name, d.Fraction, d.Duration))
		}
	}
	add("reset", f.Reset)
	add("malformed", f.Malformed)
	addDelay("stall", f.Stall)
	addDelay("slow_first_byte", f.SlowFirstByte)
	add("missing_done", f.MissingDone)
	add("error_event", f.ErrorEvent)
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ",")
}
