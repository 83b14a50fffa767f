package analyze

import (
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"

	"github.com/inferload/inferload/record"
)

// Comparison is the answer of `inferload compare`: every figure of a
// baseline run set against the same figure of a current run, with the
// difference's confidence interval and significance computed from the
// records of both. It is encoded as compare.json (docs/compare.md).
type Comparison struct {
	Baseline string `json:"baseline"`
	Current  string `json:"current"`
	// Confidence is the level of every interval, e.g. 0.95.
	Confidence float64 `json:"confidence"`
	Resamples  int     `json:"resamples"`
	Seed       uint64  `json:"seed"`
	// Limits are the regression limits applied, as KEY=VALUE.
	Limits []string `json:"limits"`
	// UnusedLimits named a figure that neither run has (a class absent
	// from one of them, say); they checked nothing.
	UnusedLimits []string `json:"unused_limits,omitempty"`
	Deltas       []Delta  `json:"deltas"`
	// Env lists the env.json fields that differ between the runs.
	Env []EnvChange `json:"env"`
	// Warnings are plain sentences about why the runs may not be
	// comparable as they are: today, server-reported cached prompt tokens
	// whose shares differ by CachedShareGap or more (cacheWarning).
	Warnings []string `json:"warnings,omitempty"`
	// NotValid names each run whose own validity verdict was NOT VALID,
	// with its reasons ("current run-b is NOT VALID: ..."): its figures
	// do not measure the load it was meant to apply, so a comparison of
	// them is no verdict. compare exits 97 for it unless --allow-invalid.
	NotValid []string `json:"not_valid,omitempty"`
	// Regressions counts deltas with Regression set.
	Regressions int `json:"regressions"`
	// BaselineRuns and CurrentRuns are how many runs (repeats) each side
	// had; Batches, with one run a side, how many batches each was cut
	// into for the runs check (0: the check was off).
	BaselineRuns int `json:"baseline_runs"`
	CurrentRuns  int `json:"current_runs"`
	Batches      int `json:"batches,omitempty"`
}

// Delta is one figure in both runs.
type Delta struct {
	// Metric is the figure's summary.json path, e.g. "ttft_ms.p99",
	// "classes.short.e2e_ms.p50", "output_tokens_per_s", "failure_rate".
	Metric   string  `json:"metric"`
	Baseline float64 `json:"baseline"`
	Current  float64 `json:"current"`
	// Diff is Current − Baseline; DiffLow and DiffHigh bound it at the
	// comparison's confidence.
	Diff     float64 `json:"diff"`
	DiffLow  float64 `json:"diff_low"`
	DiffHigh float64 `json:"diff_high"`
	// Relative is Diff / Baseline; absent when the baseline is 0.
	Relative *float64 `json:"relative,omitempty"`
	// PValue is the two-sided p-value of Test, multiplied by Family
	// (Bonferroni) when the figure has a limit.
	PValue float64 `json:"p_value"`
	Test   string  `json:"test"`
	// Level is this delta's interval level: the comparison's Confidence,
	// or 1 − (1 − Confidence)/Family for a figure with a limit. The
	// interval is exactly the set of differences Test does not reject at
	// 1 − Level, so it excludes 0 exactly when PValue < 1 − Confidence.
	Level float64 `json:"level"`
	// Family is the number of limits the error rate is split over
	// (Bonferroni), set on figures with a limit; 0 otherwise.
	Family int `json:"family,omitempty"`
	// Significant: PValue < 1 − Confidence (so the interval excludes 0).
	Significant bool `json:"significant"`
	// Change is "worse", "better", "same" (not significant) or "too
	// short" (a percentile that either run has too few values to judge:
	// NeededN values each, MinSamples at Level).
	Change  string `json:"change"`
	NeededN int    `json:"needed_n,omitempty"`
	// Limit is the regression limit that applies, as written ("10%").
	Limit string `json:"limit,omitempty"`
	// Regression: significant, worse, and the interval's worse end beyond
	// Limit (the data do not rule out a worsening as large as the limit).
	Regression bool `json:"regression"`
	// BaselineN and CurrentN are the sample sizes: latency values,
	// seconds of throughput, or requests.
	BaselineN int `json:"baseline_n"`
	CurrentN  int `json:"current_n"`
	// Runs is the figure's second test, on the variance between runs (or
	// batches of one run): a difference stands only when it agrees
	// (compare_runs.go); absent on a figure too short to judge.
	Runs *RunsCheck `json:"runs,omitempty"`
}

// Tests named in Delta.Test.
const (
	// TestQuantile: the exact two-sample quantile test (quantileTest),
	// for latency percentiles.
	TestQuantile = "quantile-exceedance"
	// TestBootstrap: the bootstrap of the difference of per-second means,
	// p from the same draws, for throughput.
	TestBootstrap = "bootstrap"
	// TestTwoProportion: the Wald z test of two proportions, interval and
	// p from the same standard error, for failure rates.
	TestTwoProportion = "two-proportion-z"
)

// Compare defaults: a zero CompareOptions field means these.
const (
	DefaultConfidence = 0.95
	DefaultResamples  = 2000
)

// CompareOptions tune a comparison; the zero value means the documented
// defaults (DefaultLimits, 95 % intervals, 2000 resamples, seed 0).
type CompareOptions struct {
	// Limits replace DefaultLimits when non-nil (an empty non-nil slice
	// means no limits).
	Limits     []Limit
	Confidence float64
	Resamples  int
	// Seed makes the bootstrap repeatable: the same runs and seed give
	// the same intervals.
	Seed uint64
	// Batches is how many contiguous batches a run is cut into for the
	// runs check when each side has one run (DefaultBatches when 0).
	// NoRunsCheck turns the check off: figures are then judged by their
	// own test alone, as if values were independent and runs did not
	// vary (true only of constructed samples).
	Batches     int
	NoRunsCheck bool
}

// latencyMetrics and comparedPercentiles are what a comparison shows of
// each latency distribution, in display order: the reported percentiles
// up to p99. session_ms is a completed conversation's time to finish
// (record.Conversation.DurationUS), present when both runs had some;
// task_ms a successful chain or graph task's (chains.<class>.e2e_ms).
var (
	latencyMetrics      = []string{"ttft_ms", "itl_ms", "tpot_ms", "e2e_ms", "ttfo_ms", "session_ms", "task_ms"}
	comparedPercentiles = record.Percentiles[:len(record.Percentiles)-1]
)

// Compare sets current against baseline. It never fails: figures missing
// from either run are left out, and limits that named them are listed in
// UnusedLimits.
func Compare(baseline, current *RunSamples, opts CompareOptions) *Comparison {
	return CompareRuns([]*RunSamples{baseline}, []*RunSamples{current}, opts)
}

// CompareRuns sets the current runs against the baseline runs: repeats
// of one scenario on each side (at least one run a side). Each figure's
// own test reads the runs' values pooled; its runs check (RunsCheck)
// reads each run's own value, or with one run a side, each batch's.
func CompareRuns(baseline, current []*RunSamples, opts CompareOptions) *Comparison {
	opts = opts.withDefaults()
	base, cur := MergeRuns(baseline), MergeRuns(current)
	c := &Comparison{Baseline: base.Name, Current: cur.Name,
		Confidence: opts.Confidence, Resamples: opts.Resamples, Seed: opts.Seed,
		Limits: []string{}, Deltas: []Delta{}, BaselineRuns: len(baseline), CurrentRuns: len(current)}
	cmp := comparer{opts: opts, limited: map[string]bool{}, pooled: map[string][]string{}}
	for _, l := range overlay(nil, opts.Limits) {
		cmp.limited[l.Metric] = true
	}
	cmp.samples(c, "", base.Overall, cur.Overall)
	cmp.throughput(c, "output_tokens_per_s", base.OutputTokensPerS, cur.OutputTokensPerS)
	cmp.throughput(c, "requests_per_s", base.RequestsPerS, cur.RequestsPerS)
	for _, name := range sharedClasses(base, cur) {
		cmp.samples(c, "classes."+name+".", base.Classes[name], cur.Classes[name])
	}
	cmp.goodput(c, base, cur)
	if !opts.NoRunsCheck {
		bu, cu := unitSet{runs: baseline, pooled: cmp.pooled}, unitSet{runs: current, pooled: cmp.pooled}
		if len(baseline) == 1 && len(current) == 1 {
			bu.batches, cu.batches, c.Batches = opts.Batches, opts.Batches, opts.Batches
		}
		for i := range c.Deltas {
			cmp.runsCheck(&c.Deltas[i], bu, cu)
		}
	}
	c.NotValid = append(notValid("baseline", baseline), notValid("current", current)...)
	c.Env = DiffEnv(base.Env, cur.Env)
	if w := cacheWarning(base.Overall.Cache, cur.Overall.Cache); w != "" {
		c.Warnings = append(c.Warnings, w)
	}
	applyLimits(c, opts.Limits)
	return c
}

// notValid names side's runs whose own verdict was NOT VALID.
func notValid(side string, runs []*RunSamples) []string {
	var out []string
	for _, rs := range runs {
		if len(rs.NotValid) > 0 {
			out = append(out, fmt.Sprintf("%s %s is NOT VALID: %s", side, rs.Name, strings.Join(rs.NotValid, "; ")))
		}
	}
	return out
}

// MergeRuns pools runs of one side: their samples and per-second
// throughput one after another, named "a+b+c", with the first run's
// environment. One run is returned as it is.
func MergeRuns(runs []*RunSamples) *RunSamples {
	if len(runs) == 1 {
		return runs[0]
	}
	names := make([]string, len(runs))
	for i, rs := range runs {
		names[i] = rs.Name
	}
	out := NewRunSamples(strings.Join(names, "+"))
	out.Env = runs[0].Env
	for _, rs := range runs {
		out.Overall.merge(rs.Overall)
		for name, s := range rs.Classes {
			if out.Classes[name] == nil {
				out.Classes[name] = &Samples{}
			}
			out.Classes[name].merge(s)
		}
		out.RequestsPerS = append(out.RequestsPerS, rs.RequestsPerS...)
		out.OutputTokensPerS = append(out.OutputTokensPerS, rs.OutputTokensPerS...)
		out.records += rs.records
		out.SessionGoodput = mergeShares(out.SessionGoodput, rs.SessionGoodput)
		out.TaskGoodput = mergeShares(out.TaskGoodput, rs.TaskGoodput)
	}
	return out
}

func (o CompareOptions) withDefaults() CompareOptions {
	if o.Limits == nil {
		o.Limits = DefaultLimits()
	}
	if o.Confidence <= 0 || o.Confidence >= 1 {
		o.Confidence = DefaultConfidence
	}
	if o.Resamples <= 0 {
		o.Resamples = DefaultResamples
	}
	if o.Batches <= 0 {
		o.Batches = DefaultBatches
	}
	return o
}

// sharedClasses are the classes both runs have, sorted. A run without
// classes has only "default", which is the overall figures again.
func sharedClasses(a, b *RunSamples) []string {
	if len(a.Classes) < 2 && len(b.Classes) < 2 {
		return nil
	}
	var out []string
	for name := range a.Classes {
		if b.Classes[name] != nil {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
}

// comparer computes deltas with the options' confidence and resampling.
// limited names the figures with a limit: they gate the verdict, so the
// chance that any of them regresses by chance is held to 1 − Confidence
// by splitting it evenly between them (Bonferroni).
type comparer struct {
	opts    CompareOptions
	limited map[string]bool
	// pooled names, per goodput figure, the classes its overall row pools.
	pooled map[string][]string
}

// level is the interval level of a figure and the family it is judged in.
func (m comparer) level(metric string) (level float64, family int) {
	if !m.limited[metric] {
		return m.opts.Confidence, 0
	}
	k := len(m.limited)
	return 1 - (1-m.opts.Confidence)/float64(k), k
}

// adjust multiplies a raw p-value by the figure's family (Bonferroni).
func adjust(p float64, family int) float64 {
	return min(1, p*float64(max(family, 1)))
}

// rng gives each metric its own stream, so adding a class or a metric
// leaves every other interval as it was.
func (m comparer) rng(metric string) *rand.Rand {
	h := fnv.New64a()
	h.Write([]byte(metric))
	return rand.New(rand.NewPCG(m.opts.Seed, h.Sum64()))
}

// samples adds the latency percentiles and failure rate of one scope.
func (m comparer) samples(c *Comparison, prefix string, b, cur *Samples) {
	if b == nil || cur == nil {
		return
	}
	metrics := latencyMetrics
	if prefix != "" { // a node's name is its class's: no overall rows
		metrics = append(slices.Clone(metrics), nodeMetrics(b, cur)...)
	}
	for _, metric := range metrics {
		bv, cv := b.values(metric), cur.values(metric)
		if len(bv) == 0 || len(cv) == 0 {
			continue
		}
		for _, pc := range comparedPercentiles {
			name := prefix + metric + "." + pc.Name
			c.Deltas = append(c.Deltas, m.percentile(name, bv, cv, pc.Q))
		}
	}
	if d, ok := m.failureRate(prefix+"failure_rate", b, cur); ok {
		c.Deltas = append(c.Deltas, d)
	}
	if d, ok := m.accuracy(prefix+"accuracy", b, cur); ok {
		c.Deltas = append(c.Deltas, d)
	}
}

// percentile compares quantile q of two sorted samples by the exact
// quantile test and the interval inverted from it. A run with fewer
// values than MinSamples(q, level) has not even one order statistic that
// bounds its q-quantile, so the percentile is not judged ("too short").
func (m comparer) percentile(name string, b, cur []float64, q float64) Delta {
	level, family := m.level(name)
	d := Delta{Metric: name, Baseline: percentile(b, q), Current: percentile(cur, q),
		Test: TestQuantile, Level: level, Family: family, BaselineN: len(b), CurrentN: len(cur)}
	d.PValue = adjust(quantileTest(b, cur, q, 0), family)
	d.DiffLow, d.DiffHigh = quantileInterval(b, cur, q, 1-level)
	d = d.finish(lowerIsBetter, 1-m.opts.Confidence)
	if need := MinSamples(q, level); len(b) < need || len(cur) < need {
		d.Significant, d.Change, d.NeededN = false, ChangeTooShort, need
	}
	return d
}

// throughput compares per-second deliveries: the difference of means by
// bootstrap, its p the share of draws on the far side of 0 (doubled), so
// the p and the percentile interval agree.
func (m comparer) throughput(c *Comparison, name string, b, cur []float64) {
	if len(b) == 0 || len(cur) == 0 {
		return
	}
	level, family := m.level(name)
	rng := m.rng(name)
	bd := bootstrapMean(rng, b, m.opts.Resamples)
	cd := bootstrapMean(rng, cur, m.opts.Resamples)
	diffs := differences(cd, bd)
	d := Delta{Metric: name, Baseline: meanOf(b), Current: meanOf(cur),
		PValue: adjust(bootstrapP(diffs), family), Test: TestBootstrap, Level: level, Family: family,
		BaselineN: len(b), CurrentN: len(cur)}
	d.DiffLow, d.DiffHigh = interval(diffs, level)
	c.Deltas = append(c.Deltas, d.finish(higherIsBetter, 1-m.opts.Confidence))
}

// failureRate compares failed / (succeeded + failed) by a two-proportion test.
func (m comparer) failureRate(name string, b, cur *Samples) (Delta, bool) {
	nb, nc := b.Succeeded+b.Failed, cur.Succeeded+cur.Failed
	if nb == 0 || nc == 0 {
		return Delta{}, false
	}
	return m.proportion(name, b.Failed, nb, cur.Failed, nc, lowerIsBetter), true
}

// accuracy compares correct / graded by a two-proportion test; higher
// is better. Absent unless both sides graded replies.
func (m comparer) accuracy(name string, b, cur *Samples) (Delta, bool) {
	if b.Graded == 0 || cur.Graded == 0 {
		return Delta{}, false
	}
	return m.proportion(name, b.Correct, b.Graded, cur.Correct, cur.Graded, higherIsBetter), true
}

// proportion compares the share hitB/nB with hitC/nC by the two-proportion
// test; better says which way is an improvement. Both n must be > 0.
func (m comparer) proportion(name string, hitB, nB, hitC, nC int64, better int) Delta {
	level, family := m.level(name)
	diff, lo, hi, p := twoProportions(hitB, nB, hitC, nC, level)
	d := Delta{Metric: name, Baseline: float64(hitB) / float64(nB),
		Current: float64(hitC) / float64(nC), DiffLow: lo, DiffHigh: hi,
		PValue: adjust(p, family), Test: TestTwoProportion, Level: level, Family: family,
		BaselineN: int(nB), CurrentN: int(nC)}
	d = d.finish(better, 1-m.opts.Confidence)
	d.Diff = diff
	return d
}

// differences pairs the i-th draws: current − baseline.
func differences(cur, base []float64) []float64 {
	out := make([]float64, len(cur))
	for i := range cur {
		out[i] = cur[i] - base[i]
	}
	return out
}

const (
	lowerIsBetter  = -1
	higherIsBetter = +1
)

// ChangeTooShort is Delta.Change for a percentile a run is too short to
// judge.
const ChangeTooShort = "too short"

// finish fills the fields that follow from the figures: the difference,
// its relative size, significance (PValue below alpha) and direction. The
// interval came from the same test at the same level, so it excludes 0
// exactly when the delta is significant; a discrete test's interval can
// miss that by a rounding step, and is then widened to 0 so the two
// never disagree on the page.
func (d Delta) finish(better int, alpha float64) Delta {
	d.Diff = d.Current - d.Baseline
	if d.Baseline != 0 {
		r := d.Diff / d.Baseline
		d.Relative = &r
	}
	d.Significant = d.PValue < alpha && (d.DiffLow > 0 || d.DiffHigh < 0)
	if !d.Significant {
		d.DiffLow, d.DiffHigh = min(d.DiffLow, 0), max(d.DiffHigh, 0)
		d.Change = "same"
		return d
	}
	if (d.DiffLow > 0) == (better == higherIsBetter) {
		d.Change = "better"
	} else {
		d.Change = "worse"
	}
	return d
}

// Figure is the delta's figure without its class scope: "failure_rate"
// of "classes.chat.failure_rate", "ttft_ms.p99" of "ttft_ms.p99".
func (d Delta) Figure() string {
	_, fig := splitMetric(d.Metric)
	return fig
}

// String is a one-line rendering for logs and test failures.
func (d Delta) String() string {
	return fmt.Sprintf("%s: %.4g → %.4g (%+.4g [%.4g, %.4g], p %.3g, %s)",
		d.Metric, d.Baseline, d.Current, d.Diff, d.DiffLow, d.DiffHigh, d.PValue, d.Change)
}

// Worse lists the regressions, for a one-line verdict.
func (c *Comparison) Worse() []string {
	var out []string
	for _, d := range c.Deltas {
		if d.Regression {
			out = append(out, d.Metric)
		}
	}
	return out
}

// Unjudged lists the figures with a limit that a run was too short to
// judge: the limit checked nothing, which a pass must say.
func (c *Comparison) Unjudged() []string {
	var out []string
	for _, d := range c.Deltas {
		if d.Limit != "" && d.Change == ChangeTooShort {
			out = append(out, d.Metric)
		}
	}
	return out
}

// CannotTell lists the figures with a limit whose difference the runs
// check could not tell from run-to-run noise: the limit checked nothing
// there either, which a pass must say.
func (c *Comparison) CannotTell() []string {
	var out []string
	for _, d := range c.Deltas {
		if d.Limit != "" && d.Change == ChangeCannotTell {
			out = append(out, d.Metric)
		}
	}
	return out
}

// Verdict is "regression" when any delta regressed, else "pass".
func (c *Comparison) Verdict() string {
	if c.Regressions > 0 {
		return "regression"
	}
	return "pass"
}
