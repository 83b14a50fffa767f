package cli

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/inferload/inferload/analyze"
	"github.com/inferload/inferload/experiment"
	"github.com/inferload/inferload/plan"
	"github.com/inferload/inferload/record"
)

// capacityFlags are find-capacity's own options, beside the plan's.
type capacityFlags struct {
	stepLoads
	slos           []string
	maxFailureRate float64
	confidence     float64
	precision      float64
	maxProbes      int
	confirm        int
}

func (f *capacityFlags) bind(c *cobra.Command) {
	fs := c.Flags()
	fs.StringVar(&f.users, "users", "", "closed loop: search users in LOW:HIGH, e.g. 1:256")
	fs.StringVar(&f.rates, "rates", "", "open loop: search requests/s in LOW:HIGH, e.g. 0.5:64")
	fs.StringArrayVar(&f.slos, "slo", nil, sloFlagHelp)
	fs.Float64Var(&f.maxFailureRate, "max-failure-rate", analyze.DefaultMaxFailureRate, "a passing probe's failure rate is at most this")
	fs.Float64Var(&f.confidence, "confidence", analyze.DefaultConfidence, "confidence at which each SLO's percentile must be shown to hold")
	fs.Float64Var(&f.precision, "precision", analyze.DefaultSearch.Precision, "stop once the best passing and lowest failing loads are this close (fraction)")
	fs.IntVar(&f.maxProbes, "max-probes", 0, fmt.Sprintf("stop after this many probes, confirmations included (default %d, plus %d for each --confirm)",
		analyze.DefaultSearch.MaxProbes, analyze.ProbesPerConfirmation))
	fs.IntVar(&f.confirm, "confirm", 0, "probe the answer again this many times; a load holds only if every probe at it passed, else the search steps back (2 recommended on real servers)")
}

func (f *capacityFlags) busiest(o experiment.CapacityOptions) (string, float64) {
	return o.Mode, o.Search.High
}

// options checks the flags and turns them into the search's options.
func (f *capacityFlags) options(p *plan.Plan) (experiment.CapacityOptions, error) {
	if p.Load.Duration <= 0 {
		return experiment.CapacityOptions{}, usageErrorf("--duration: each probe's length is required (a search does not stop on --requests)")
	}
	mode, span, err := f.pick(" LOW:HIGH")
	if err != nil {
		return experiment.CapacityOptions{}, err
	}
	low, high, err := parseSpan(span, mode == record.ModeClosed)
	if err != nil {
		return experiment.CapacityOptions{}, usageError(err)
	}
	if len(f.slos) == 0 {
		return experiment.CapacityOptions{}, usageErrorf("set at least one --slo, e.g. --slo 'ttft.p99<=2s'")
	}
	bounds, err := parseObjectives(f.slos)
	if err != nil {
		return experiment.CapacityOptions{}, err
	}
	if !(f.confidence > 0 && f.confidence < 1) || !(f.precision > 0) || f.maxProbes < 0 || f.confirm < 0 || !(f.maxFailureRate >= 0 && f.maxFailureRate < 1) {
		return experiment.CapacityOptions{}, usageErrorf("--confidence and --max-failure-rate are fractions below 1, --precision above 0, --max-probes and --confirm at least 0")
	}
	return experiment.CapacityOptions{
		Mode:   mode,
		Search: analyze.SearchOptions{Low: low, High: high, Whole: mode == record.ModeClosed, Precision: f.precision, MaxProbes: f.maxProbes, Confirm: f.confirm},
		SLOs:   bounds, MaxFailureRate: f.maxFailureRate, Confidence: f.confidence, ProbeDuration: p.Load.Duration,
	}, nil
}

// sloFlagHelp is --slo's help, the same for every command that takes it.
const sloFlagHelp = "objective [CLASS:]METRIC.PERCENTILE<=DURATION, METRIC ttft, ttfo (first answer token), tpot or e2e, e.g. ttft.p99<=2s or chat:ttft.p90<=500ms (repeatable)"

// parseObjectives reads --slo's objectives (record.ParseSLO).
func parseObjectives(exprs []string) ([]record.SLO, error) {
	var out []record.SLO
	for _, s := range exprs {
		b, err := record.ParseSLO(s)
		if err != nil {
			return nil, usageError(err)
		}
		out = append(out, b)
	}
	return out, nil
}

// parseSpan reads LOW:HIGH.
func parseSpan(s string, whole bool) (low, high float64, err error) {
	a, b, ok := strings.Cut(s, ":")
	if ok {
		low, err = strconv.ParseFloat(strings.TrimSpace(a), 64)
	}
	if ok && err == nil {
		high, err = strconv.ParseFloat(strings.TrimSpace(b), 64)
	}
	if !ok || err != nil || !(low > 0) || !(high >= low) || (whole && (low != float64(int(low)) || high != float64(int(high)))) {
		return 0, 0, fmt.Errorf("load range %q: want LOW:HIGH with 0 < LOW ≤ HIGH (whole numbers of users), e.g. 1:256", s)
	}
	return low, high, nil
}

func newFindCapacityCmd(st *State) *cobra.Command {
	return newSteppedCmd(st, &cobra.Command{
		Use:   "find-capacity [flags]",
		Short: "Find the highest load at which the SLOs hold, with stated confidence",
		Long: `Probe loads, each for --duration with its first --warmup discarded, doubling
from LOW until a probe fails, then bisecting: the answer is the highest load
at which every --slo held and the failure rate stayed within
--max-failure-rate. Each SLO is judged by the binomial rule at --confidence:
a probe with too few samples for the percentile never passes (a P99 needs
299 samples at 95%). With --confirm N the answer is probed N more times: a
load holds only if every probe at it passed, so a failed confirmation steps
the search back below it (within --max-probes, or the answer is reported
unconfirmed).

  inferload find-capacity --url http://127.0.0.1:8000/v1 --model m --users 1:256 \
      --slo 'ttft.p99<=2s' --slo 'tpot.p99<=100ms' --duration 2m --warmup 20s

Every plan flag applies (see docs/plan.md); docs/experiments.md explains the method.`,
		Args: cobra.NoArgs,
	}, &capacityFlags{}, experiment.FindCapacity)
}
