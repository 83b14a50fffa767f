package analyze

import (
	"cmp"
	"fmt"
	"math"
	"strings"

	"github.com/inferload/inferload/record"
)

// KneeOptions are the thresholds of knee detection. The zero value of each
// field means its default.
type KneeOptions struct {
	// ThroughputGain: a step whose throughput grew by less than this
	// fraction over the previous one has stopped scaling (default 0.25:
	// twice the users for under a quarter more throughput is saturation;
	// 10% misses the knee when the batch is not quite full at it, see
	// docs/experiments.md).
	ThroughputGain float64
	// LatencyGrowth: ... while a latency percentile grew by more than this
	// fraction (default 0.20).
	LatencyGrowth float64
	// OperatingFraction of the knee is the recommended operating point
	// (default 0.80).
	OperatingFraction float64
	// Percentile is the latency percentile compared (default "p90").
	Percentile string
	// BySLO: the operating point is the SLOs' (a sweep that judges its
	// steps by them), so a found knee's reason defers to it instead of
	// recommending OperatingFraction of the knee. Set by the summary,
	// never stored in a design.
	BySLO bool `json:"-"`
}

// DefaultKnee holds each KneeOptions default, for the zero fields and for
// the sweep command's flags.
var DefaultKnee = KneeOptions{ThroughputGain: 0.25, LatencyGrowth: 0.20, OperatingFraction: 0.80, Percentile: "p90"}

func (o KneeOptions) withDefaults() KneeOptions {
	o.ThroughputGain = cmp.Or(o.ThroughputGain, DefaultKnee.ThroughputGain)
	o.LatencyGrowth = cmp.Or(o.LatencyGrowth, DefaultKnee.LatencyGrowth)
	o.OperatingFraction = cmp.Or(o.OperatingFraction, DefaultKnee.OperatingFraction)
	o.Percentile = cmp.Or(o.Percentile, DefaultKnee.Percentile)
	return o
}

// FindKnee finds the knee of a load sweep: walking the valid constant
// steps in order of load, the first pair (a, b) where throughput grew by
// less than ThroughputGain while TTFT or E2E at Percentile grew by more
// than LatencyGrowth. The knee is a's load: beyond it more load buys
// little throughput and costs latency. Invalid steps and ramps are left
// out and the reason says so. docs/experiments.md documents the method.
func FindKnee(steps []record.Step, o KneeOptions) (record.Knee, error) {
	o = o.withDefaults()
	if _, err := percentileQ(o.Percentile); err != nil {
		return record.Knee{}, fmt.Errorf("knee: %w", err)
	}
	k := record.Knee{ThroughputGain: o.ThroughputGain, LatencyGrowth: o.LatencyGrowth,
		OperatingFraction: o.OperatingFraction, Evidence: []int{}}
	usable, skipped := usableSteps(steps)
	note := skippedNote(skipped)
	if len(usable) < 2 {
		k.Reason = fmt.Sprintf("no knee: %d valid constant step(s), at least two are needed%s%s", len(usable), note, flatNote(steps, o))
		return k, nil
	}
	k.Mode = usable[0].Mode
	for i := 1; i < len(usable); i++ {
		a, b := &usable[i-1], &usable[i]
		tg, thrA, thrB, unit := throughputGrowth(a, b)
		lg, metric, latA, latB := latencyGrowth(a, b, o.Percentile)
		if math.IsNaN(tg) || tg >= o.ThroughputGain || !(lg > o.LatencyGrowth) {
			continue
		}
		k.Found, k.Load, k.Evidence = true, a.Target, []int{a.Index, b.Index}
		k.Recommended = operatingPoint(a.Target, a.Mode, o.OperatingFraction)
		k.Reason = fmt.Sprintf("from %s to %s throughput grew %s (%.4g → %.4g %s) while %s %s grew %s (%s → %s ms): "+
			"the knee is %s%s%s",
			record.LoadText(a.Target, a.Mode), record.LoadText(b.Target, b.Mode), pct(tg), thrA, thrB, unit,
			metric, o.Percentile, pct(lg), msText(latA), msText(latB),
			record.LoadText(k.Load, k.Mode), kneeAdvice(k, o.BySLO), note)
		return k, nil
	}
	last := usable[len(usable)-1]
	// "Try higher loads" only while nothing says the server already
	// stopped scaling: past a flat stretch, higher loads cannot help, the
	// steps there need to be valid (longer, or steadier).
	advice, flat := "; try higher loads", flatNote(steps, o)
	if flat != "" {
		advice = ""
	}
	k.Reason = fmt.Sprintf("no knee up to %s: throughput never grew less than %s in a step while latency %s grew more than %s%s%s%s",
		record.LoadText(last.Target, last.Mode), pct(o.ThroughputGain), o.Percentile, pct(o.LatencyGrowth), advice, note, flat)
	return k, nil
}

// kneeAdvice is the clause of a found knee's reason that says where to
// run: OperatingFraction of the knee ("; run at 51 users (80% of it)"),
// or, when the SLOs decide (bySLO), that they do, so the two never
// disagree on one screen.
func kneeAdvice(k record.Knee, bySLO bool) string {
	if bySLO {
		return "; the operating point follows the SLOs (Run at)"
	}
	return fmt.Sprintf("; run at %s (%.0f%% of it)", record.LoadText(k.Recommended, k.Mode), k.OperatingFraction*100)
}

// flatNote says when throughput stopped growing across the constant steps
// of the first step's mode, valid or not: from the first step whose
// load's successor gained less than ThroughputGain to the last, every
// step stayed within that gain of it. A sweep on a busy host whose steps
// were invalidated still shows the server saturating (14.4 requests/s at
// 12, 16 and 20 requests/s), and the reader must hear it even though the
// knee cannot be placed on invalid steps. "" when throughput kept growing.
func flatNote(steps []record.Step, o KneeOptions) string {
	var all []record.Step
	for _, s := range steps {
		if s.Kind == record.StepRamp || (len(all) > 0 && (s.Mode != all[0].Mode || s.Target <= all[len(all)-1].Target)) {
			continue
		}
		all = append(all, s)
	}
	for i := 0; i+1 < len(all); i++ {
		from := &all[i]
		flat := true
		for j := i + 1; j < len(all) && flat; j++ {
			g, _, _, _ := throughputGrowth(from, &all[j])
			flat = !math.IsNaN(g) && g < o.ThroughputGain
		}
		if !flat {
			continue
		}
		last := &all[len(all)-1]
		_, thrA, thrB, unit := throughputGrowth(from, last)
		invalid := 0
		for _, s := range all[i:] {
			if !s.Validity.Valid {
				invalid++
			}
		}
		return fmt.Sprintf("; but throughput was flat from %s to %s (%.4g → %.4g %s, %d of these %d steps invalid): the server stopped scaling there",
			record.LoadText(from.Target, from.Mode), record.LoadText(last.Target, last.Mode), thrA, thrB, unit, invalid, len(all)-i)
	}
	return ""
}

// usableSteps keeps the valid constant steps of the first step's mode, in
// order of load; it returns the indexes of those left out.
func usableSteps(steps []record.Step) (usable []record.Step, skipped []int) {
	mode := ""
	for _, s := range steps {
		if !s.Validity.Valid || s.Kind == record.StepRamp {
			skipped = append(skipped, s.Index)
			continue
		}
		if mode == "" {
			mode = s.Mode
		}
		if s.Mode != mode || (len(usable) > 0 && s.Target <= usable[len(usable)-1].Target) {
			skipped = append(skipped, s.Index)
			continue
		}
		usable = append(usable, s)
	}
	return usable, skipped
}

func skippedNote(skipped []int) string {
	if len(skipped) == 0 {
		return ""
	}
	ids := make([]string, len(skipped))
	for i, s := range skipped {
		ids[i] = fmt.Sprint(s)
	}
	return fmt.Sprintf(" (step %s left out: invalid, a ramp, another mode or not a higher load)", strings.Join(ids, ", "))
}

// throughputGrowth compares output token throughput when both steps have
// it (what an LLM server sells), request throughput otherwise.
func throughputGrowth(a, b *record.Step) (growth, from, to float64, unit string) {
	from, to, unit = a.Throughput.OutputTokensPerS, b.Throughput.OutputTokensPerS, "output tokens/s"
	if from <= 0 || to <= 0 {
		from, to, unit = a.Throughput.RequestsPerS, b.Throughput.RequestsPerS, "requests/s"
	}
	if from <= 0 {
		return math.NaN(), from, to, unit
	}
	return to/from - 1, from, to, unit
}

// latencyGrowth is the larger relative growth of TTFT and E2E at the
// percentile; TTFT is skipped when a step has none (non-streamed).
func latencyGrowth(a, b *record.Step, pctName string) (growth float64, metric string, from, to float64) {
	growth = math.Inf(-1)
	for _, m := range []struct {
		name   string
		sa, sb record.Stats
	}{{"TTFT", a.Metrics.TTFT, b.Metrics.TTFT}, {"E2E", a.Metrics.E2E, b.Metrics.E2E}} {
		x, y := statAt(m.sa, pctName), statAt(m.sb, pctName)
		if x <= 0 || y <= 0 {
			continue
		}
		if g := y/x - 1; g > growth {
			growth, metric, from, to = g, m.name, x, y
		}
	}
	return growth, metric, from, to
}

func statAt(s record.Stats, name string) float64 {
	v, _ := s.At(name)
	return v
}

// operatingPoint is fraction × knee, whole users (at least 1) in a closed
// loop.
func operatingPoint(knee float64, mode string, fraction float64) float64 {
	v := knee * fraction
	if mode == record.ModeClosed {
		return math.Max(1, math.Floor(v))
	}
	return math.Round(v*1000) / 1000
}

func pct(f float64) string { return fmt.Sprintf("%.0f%%", f*100) }

// msText is a latency in milliseconds as a reason prints it: whole
// milliseconds from 1 s up (11610, not 1.161e+04), four digits below.
func msText(ms float64) string {
	if math.Abs(ms) >= 1000 {
		return fmt.Sprintf("%.0f", ms)
	}
	return fmt.Sprintf("%.4g", ms)
}
