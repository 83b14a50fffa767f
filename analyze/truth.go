package analyze

// This file: the truth suite (TRUTH.md, `inferload truth`): every verdict
// run on scenarios whose truth is known because they were constructed
// that way, with the verdict printed beside the truth. Its figures are
// the error rates docs/telemetry.md and docs/compare.md state.

import (
	"fmt"
	"slices"
	"strings"

	"github.com/inferload/inferload/observe"
	"github.com/inferload/inferload/record"
)

// TruthRow is one scenario of the truth suite: what is true by
// construction, what the verdicts said, and whether they agree.
type TruthRow struct {
	Scenario string
	Truth    string
	Verdict  string
	Match    bool
}

// TruthOptions size the suite; the zero value means the defaults.
type TruthOptions struct {
	// Pairs is the number of compare pairs per planted change (default 40;
	// the targets are stated over at least 20).
	Pairs int
	// Seed draws the compare pairs (default 0).
	Seed uint64
	// Requests is the length of each run of a planted pair (default
	// TruthRequests, the length the detection target is stated at).
	Requests int
}

// TruthReport is the suite's answer: its rows and the compare rates.
type TruthReport struct {
	Rows    []TruthRow
	Compare CompareRates
}

// OK says every row matched and every compare target was met.
func (r TruthReport) OK() bool {
	for _, row := range r.Rows {
		if !row.Match {
			return false
		}
	}
	return r.Compare.MeetsTargets()
}

// Truth runs the suite: the bottleneck hints and the client verdict on
// constructed telemetry, the overload hint on constructed load trends,
// validity on constructed steps, the knee on a constructed flat sweep,
// the capacity search against planted capacities, soak drift on flat
// and rising windowed series, and compare on pairs drawn from known
// distributions (TruthCompare).
// It takes a few seconds and is deterministic for given options.
func Truth(o TruthOptions) TruthReport {
	var rows []TruthRow
	for _, sc := range hintScenarios() {
		rows = append(rows, sc.run())
	}
	rows = append(rows, validityScenarios()...)
	rows = append(rows, flatSweepScenario())
	rows = append(rows, serverTimeScenarios()...)
	rows = append(rows, prefixCacheScenarios()...)
	rows = append(rows, capacityScenarios()...)
	rows = append(rows, driftScenarios(o.Seed)...)
	rates := TruthCompare(o)
	rows = append(rows, rates.rows()...)
	return TruthReport{Rows: rows, Compare: rates}
}

// hintScenario is constructed telemetry with the hints (and warnings)
// that are true of it.
type hintScenario struct {
	name, truth string
	samples     []observe.Sample
	mode        string
	trend       record.LoadTrend
	want        []string // hint rules, in Hints' order
	warning     string   // a warning that must be given, "" for none
}

// truthSeconds is the length of every constructed telemetry window.
const truthSeconds = 30

// series is truthSeconds one-second samples of source with vals(i).
func series(source string, vals func(i int) map[string]float64) []observe.Sample {
	out := make([]observe.Sample, truthSeconds)
	for i := range out {
		at := int64(i)*1_000_000 + 500_000
		out[i] = observe.Sample{TS: at / 1e6, TimeUS: at, Source: source, Values: vals(i)}
	}
	return out
}

func hintScenarios() []hintScenario {
	idleClient := series("client", func(int) map[string]float64 {
		return map[string]float64{observe.ClientCPUPct: 12, observe.ClientSchedLagP99: 1}
	})
	server := func(vals func(i int) map[string]float64) []observe.Sample {
		return append(series("server", vals), idleClient...)
	}
	return []hintScenario{
		{name: "healthy, under-loaded", truth: "no bottleneck",
			samples: server(func(i int) map[string]float64 {
				return map[string]float64{observe.GPUUtil: 40, observe.QueueDepth: 0, observe.KVCacheUsage: 0.2, observe.OutputTokensPerS: 300 + float64(i)}
			})},
		{name: "1 user (tiny: 4 users give 3.4×), GPU busy, flat, nothing waiting", truth: "below saturation: not compute bound",
			samples: server(func(i int) map[string]float64 {
				return map[string]float64{observe.GPUUtil: 99, observe.QueueDepth: 0, observe.RunningBatch: 1, observe.OutputTokensPerS: 110 + float64(i%2)}
			})},
		{name: "past saturation: GPU busy, 12 waiting, flat", truth: "compute bound",
			samples: server(func(i int) map[string]float64 {
				return map[string]float64{observe.GPUUtil: 98, observe.QueueDepth: 12, observe.RunningBatch: 64, observe.OutputTokensPerS: 1800 + float64(i%3)}
			}), want: []string{"compute_bound"}},
		{name: "KV cache full, preempting", truth: "KV/memory bound",
			samples: server(func(i int) map[string]float64 {
				return map[string]float64{observe.GPUUtil: 97, observe.QueueDepth: 5, observe.KVCacheUsage: 0.98, observe.PreemptionsPerS: 1.5, observe.OutputTokensPerS: 900}
			}), want: []string{"memory_bound"}},
		{name: "queue growing, GPU at 30%", truth: "scheduler bound",
			samples: server(func(i int) map[string]float64 {
				return map[string]float64{observe.GPUUtil: 30, observe.QueueDepth: float64(i), observe.OutputTokensPerS: 400}
			}), want: []string{"scheduler_limit"}},
		{name: "client CPU pegged", truth: "client bound",
			samples: series("client", func(int) map[string]float64 {
				return map[string]float64{observe.ClientCPUPct: 97, observe.ClientSchedLagP99: 45}
			}), want: []string{"client_bound"}},
		{name: "busy host: lag 120 ms, client CPU 20%", truth: "host busy, client not saturated",
			samples: series("client", func(int) map[string]float64 {
				return map[string]float64{observe.ClientCPUPct: 20, observe.ClientSchedLagP99: 120}
			}), warning: "the host was busy with other work"},
		{name: "open loop 6/s, 3/s completed, in flight 10 → 35", truth: "overload",
			mode: record.ModeOpen, trend: record.LoadTrend{WindowS: 60, Issued: 360, Completed: 181, InFlightFirst: 10, InFlightSecond: 35},
			samples: idleClient, want: []string{"overload"}},
		{name: "open loop at 4/s, all completed, in flight steady", truth: "not overloaded",
			mode: record.ModeOpen, trend: record.LoadTrend{WindowS: 60, Issued: 240, Completed: 238, InFlightFirst: 3.1, InFlightSecond: 3.2},
			samples: idleClient},
	}
}

// run gives the scenario's summary the verdicts through Diagnose, the
// path Assemble takes.
func (sc hintScenario) run() TruthRow {
	s := &record.Summary{Mode: record.ModeClosed, Requests: record.Requests{Succeeded: 1000}}
	if sc.mode != "" {
		s.Mode = sc.mode
	}
	info := record.RunInfo{EndUS: truthSeconds * 1_000_000}
	observe.Summarize(sc.samples, info, s)
	if err := Diagnose(s, Evidence{Samples: sc.samples, Info: info, Trend: sc.trend}); err != nil {
		return TruthRow{Scenario: sc.name, Truth: sc.truth, Verdict: "error: " + err.Error()}
	}
	var rules []string
	for _, h := range s.Hints {
		rules = append(rules, h.Rule)
	}
	warned := sc.warning == "" || slices.ContainsFunc(s.Warnings, func(w string) bool { return strings.Contains(w, sc.warning) })
	verdict := "hints: " + orNone(rules)
	if sc.warning != "" {
		verdict += fmt.Sprintf("; warning %q: %v", sc.warning, warned)
	}
	return TruthRow{Scenario: sc.name, Truth: sc.truth, Verdict: verdict, Match: slices.Equal(rules, sc.want) && warned}
}

func orNone(v []string) string {
	if len(v) == 0 {
		return "none"
	}
	return strings.Join(v, ", ")
}

// validityScenarios are constructed steps whose validity is known.
func validityScenarios() []TruthRow {
	step := func(mode string, target, achieved, windowS float64, n, late int64) record.Step {
		return record.Step{Kind: record.StepConstant, Mode: mode, Target: target, WindowS: windowS,
			Requests: record.Requests{Succeeded: n, Late: late},
			Metrics:  record.Metrics{E2E: record.Stats{Count: n}, TTFT: record.Stats{Count: n}},
			Validity: record.Validity{AchievedLoad: achieved}}
	}
	cases := []struct {
		name, truth string
		step        record.Step
		valid       bool
	}{
		{"Poisson 4/s for 12 s, 43 arrivals (3.59/s)", "valid: ordinary Poisson scatter", step(record.ModeOpen, 4, 3.59, 12, 43, 0), true},
		{"open 4/s for 120 s, 360 arrivals (3/s)", "invalid: the load was not applied", step(record.ModeOpen, 4, 3, 120, 360, 0), false},
		{"1 of 60 requests late, client idle", "valid: one hiccup", step(record.ModeOpen, 5, 5, 12, 60, 1), true},
		{"106 of 1000 requests late", "invalid: client could not keep the schedule", step(record.ModeOpen, 50, 50, 20, 1000, 106), false},
		{"8 users held, 7.9 in flight", "valid", step(record.ModeClosed, 8, 7.9, 30, 400, 0), true},
	}
	var rows []TruthRow
	for _, c := range cases {
		s := c.step
		verdict := "valid"
		if err := Judge(&s, Criteria{}); err != nil {
			verdict = "error: " + err.Error()
		} else if !s.Validity.Valid {
			verdict = "invalid: " + strings.Join(s.Validity.Reasons, "; ")
		}
		rows = append(rows, TruthRow{Scenario: "validity: " + c.name, Truth: c.truth, Verdict: verdict,
			Match: s.Validity.Valid == c.valid})
	}
	return rows
}

// flatSweepScenario is the busy-host sweep: throughput flat at 14.4/s
// from 16/s while TTFT rises, the high steps invalid.
func flatSweepScenario() TruthRow {
	step := func(i int, target, rps, ttft float64, valid bool) record.Step {
		return record.Step{Index: i, Kind: record.StepConstant, Mode: record.ModeOpen, Target: target,
			Throughput: record.Throughput{RequestsPerS: rps},
			Metrics:    record.Metrics{TTFT: record.Stats{P90: ttft}, E2E: record.Stats{P90: ttft + 400}},
			Validity:   record.Validity{Valid: valid}}
	}
	steps := []record.Step{step(1, 4, 4, 48, true), step(2, 8, 8, 50, true), step(3, 12, 11.9, 60, true),
		step(4, 16, 14.4, 900, false), step(5, 20, 14.4, 2884, false)}
	k, err := FindKnee(steps, KneeOptions{})
	row := TruthRow{Scenario: "sweep 4–20 req/s, throughput flat at 14.4/s, top steps invalid", Truth: "saturated: the reason says throughput was flat"}
	if err != nil {
		row.Verdict = "error: " + err.Error()
		return row
	}
	row.Verdict, row.Match = k.Reason, strings.Contains(k.Reason, "throughput was flat")
	return row
}
