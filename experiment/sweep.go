package experiment

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/inferload/inferload/analyze"
	"github.com/inferload/inferload/plan"
	"github.com/inferload/inferload/record"
	"github.com/inferload/inferload/schedule"
	"github.com/inferload/inferload/summary"
)

// SweepOptions describe a load sweep: one constant step per load, after a
// single-request baseline.
type SweepOptions struct {
	// Mode is record.ModeClosed (Loads are users) or record.ModeOpen
	// (requests/s).
	Mode  string
	Loads []float64
	// StepDuration is each step's length, warm-up included (the plan's
	// load.warmup is each step's warm-up).
	StepDuration time.Duration
	// Knee are the knee thresholds; the zero value uses the defaults.
	Knee analyze.KneeOptions
	// Stage holds validity criteria and the failure rate that ends the
	// sweep early. Goodput is judged by the plan's workload SLOs.
	Stage StageOptions
	// SLOs judge each step as find-capacity judges a probe, for the
	// operating point: the highest step at which every one held. None
	// means the plan's goodput SLOs at the knee's percentile
	// (plan.Workload.Objectives); with none there either, the operating
	// point is the knee's.
	SLOs []record.SLO
	// MaxFailureRate is the highest failure rate a step meeting the SLOs
	// may have (default analyze.DefaultMaxFailureRate).
	MaxFailureRate float64
}

// Sweep runs the baseline (1 user) and then each load of o for
// o.StepDuration, into one run directory, and detects the knee. Step 1 is
// always the single-request baseline: a closed-loop sweep that starts at 1
// user uses it as its first step.
func Sweep(ctx context.Context, p *plan.Plan, opts Options, o SweepOptions) (*Outcome, error) {
	stages, d, err := o.design(p)
	if err != nil {
		return nil, err
	}
	return runStages(ctx, p, stages, opts, o.Stage, d)
}

// design is the sweep's stages and the design its run directory is
// judged by (the virtual-time tests judge theirs by the same).
func (o SweepOptions) design(p *plan.Plan) ([]schedule.Stage, summary.Design, error) {
	stages, err := sweepStages(o)
	if err != nil {
		return nil, summary.Design{}, err
	}
	return stages, summary.Design{Kind: summary.KindSweep, Criteria: o.Stage.Criteria,
		Knee: &summary.KneeDesign{Options: o.Knee, Mode: o.Mode}, Capacity: o.judging(p, stages)}, nil
}

// judging is how the sweep judges its steps against its objectives (o's
// SLOs, else the plan's goodput SLOs at the knee's percentile), or nil
// when there are none. The baseline is no probe unless it is one of the
// sweep's loads.
func (o SweepOptions) judging(p *plan.Plan, stages []schedule.Stage) *summary.CapacityJudging {
	slos := o.SLOs
	if len(slos) == 0 {
		q, _ := record.PercentileQ(cmp.Or(o.Knee.Percentile, analyze.DefaultKnee.Percentile))
		slos = p.Workload.Objectives(q)
	}
	if len(slos) == 0 {
		return nil
	}
	c := &summary.CapacityJudging{Mode: o.Mode, SLOs: slos, Sweep: true,
		MaxFailureRate: cmp.Or(o.MaxFailureRate, analyze.DefaultMaxFailureRate),
		Confidence:     cmp.Or(o.Stage.Criteria.Confidence, analyze.DefaultConfidence)}
	if len(stages) > len(o.Loads) {
		c.Baseline = 1
	}
	return c
}

// sweepStages is the baseline and one step per load.
func sweepStages(o SweepOptions) ([]schedule.Stage, error) {
	if o.Mode != record.ModeClosed && o.Mode != record.ModeOpen {
		return nil, fmt.Errorf("sweep: mode %q: want closed (concurrency) or open (rate)", o.Mode)
	}
	if len(o.Loads) == 0 {
		return nil, fmt.Errorf("sweep: no loads to step through")
	}
	if o.StepDuration <= 0 {
		return nil, fmt.Errorf("sweep: step duration %s: want a positive duration", o.StepDuration)
	}
	stages := []schedule.Stage{{Kind: record.StepConstant, Mode: record.ModeClosed, Duration: o.StepDuration, Target: 1}}
	for i, l := range o.Loads {
		if o.Mode == record.ModeClosed && i == 0 && l == 1 {
			continue // the baseline is this step
		}
		stages = append(stages, schedule.Stage{Kind: record.StepConstant, Mode: o.Mode, Duration: o.StepDuration, Target: l})
	}
	return stages, nil
}

// maxSweepSteps bounds a geometric series gone wrong.
const maxSweepSteps = 64

// ParseLoads reads a sweep's loads: a list, "1,8,16,32", or a geometric
// series, "geometric(1,2,128)" (start, factor, last: 1 2 4 … 128). Loads
// must be positive and rising; whole numbers when whole is set (users).
func ParseLoads(s string, whole bool) ([]float64, error) {
	s = strings.TrimSpace(s)
	var loads []float64
	var err error
	if args, ok := strings.CutPrefix(s, "geometric("); ok && strings.HasSuffix(args, ")") {
		loads, err = geometric(strings.TrimSuffix(args, ")"))
	} else {
		loads, err = loadList(s)
	}
	if err != nil {
		return nil, fmt.Errorf("loads %q: %w", s, err)
	}
	for i, l := range loads {
		if whole && l != math.Trunc(l) {
			return nil, fmt.Errorf("loads %q: %g is not a whole number of users", s, l)
		}
		if i > 0 && l <= loads[i-1] {
			return nil, fmt.Errorf("loads %q: %g after %g: loads must rise", s, l, loads[i-1])
		}
	}
	return loads, nil
}

func loadList(s string) ([]float64, error) {
	parts := strings.Split(s, ",")
	if len(parts) > maxSweepSteps {
		return nil, fmt.Errorf("%d loads is more than %d", len(parts), maxSweepSteps)
	}
	out := make([]float64, 0, len(parts))
	for _, part := range parts {
		v, err := positive(part)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

func geometric(args string) ([]float64, error) {
	parts := strings.Split(args, ",")
	if len(parts) != 3 {
		return nil, fmt.Errorf("want geometric(START,FACTOR,LAST), e.g. geometric(1,2,128)")
	}
	var v [3]float64
	for i, part := range parts {
		x, err := positive(part)
		if err != nil {
			return nil, err
		}
		v[i] = x
	}
	start, factor, last := v[0], v[1], v[2]
	if factor <= 1 {
		return nil, fmt.Errorf("factor %g: want more than 1", factor)
	}
	var out []float64
	for x := start; x <= last*(1+1e-9); x *= factor {
		if len(out) == maxSweepSteps {
			return nil, fmt.Errorf("more than %d steps", maxSweepSteps)
		}
		out = append(out, math.Round(x*1e6)/1e6)
	}
	return out, nil
}

func positive(s string) (float64, error) {
	v, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) || v <= 0 {
		return 0, fmt.Errorf("%q is not a number above 0", strings.TrimSpace(s))
	}
	return v, nil
}
