package report

import (
	"encoding/json"
	"math"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/inferload/inferload/observe"
	"github.com/inferload/inferload/record"
)

// stagedInput is a five-step closed-loop sweep of 20 s steps (5 s warm-up
// each, every one backing its P99s) with a knee at 16 users, server telemetry whose KV cache use is
// 10 × users %, a soak drift, goodput under an SLO, a compute estimate,
// and records whose TTFT grows with the prompt.
func stagedInput() *HTMLInput {
	s := &record.Summary{SchemaVersion: 1, Name: "sweep", Mode: record.ModeClosed, WindowS: 75,
		Started: time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC)}
	s.Requests = record.Requests{Total: 1000, Succeeded: 990, Failed: 10}
	s.Goodput = record.Goodput{SLO: record.SLO{TTFTMs: 500}, Met: 900, Attainment: 0.9, RequestsPerS: 12}
	s.Compute = &record.Compute{Model: record.Model{ParamsB: 8}, AchievedFLOPPerS: 3.2e14, OfferedFLOPPerS: 4e14}
	for i, users := range []float64{1, 2, 4, 8, 16} {
		st := record.Step{Index: i + 1, Kind: record.StepConstant, Mode: record.ModeClosed, Target: users,
			StartS: float64(i) * 20, WindowS: 15, FailureRate: users / 400, GoodputPerS: users,
			Validity: record.Validity{Valid: true, Percentiles: map[string]string{"ttft": "p99", "itl": "p99", "e2e": "p99"}}}
		st.Throughput.OutputTokensPerS = 100 * math.Min(users, 8)
		st.Metrics.TTFT = record.Stats{P50: 50 * users, P99: 80 * users}
		st.Metrics.ITL.P99 = 20 + users
		st.Metrics.E2E.P99 = 1000 + 100*users
		s.Steps = append(s.Steps, st)
	}
	s.Steps[0].Validity.Reasons = []string{"only 12 successes " + plantedScript}
	s.Knee = &record.Knee{Found: true, Load: 8, Mode: record.ModeClosed, Recommended: 6, Reason: "throughput grew 0% from 8 to 16 users"}
	s.Soak = &record.Soak{WindowS: 20, Drift: []record.Drift{
		{Metric: "ttft_p99_ms", Tested: true, Change: 0.38, PValue: 0.001, Significant: true, Drifted: true, Verdict: "rose 38%"},
		{Metric: "requests_per_s", Tested: true, Change: -0.01, PValue: 0.7, Verdict: "stable"},
		{Metric: "P99 E2E", Verdict: "P99 E2E drift not tested: too short"}}}
	for i := range 5 {
		s.Soak.Windows = append(s.Soak.Windows, record.SoakWindow{StartS: float64(20 * i), Requests: 400,
			RequestsPerS: 20, TTFTP99: 300 + 30*float64(i), E2EP99: 2000, TTFTBacked: "p99", E2EBacked: "p99"})
	}
	in := &HTMLInput{Summary: s, Digest: NewDigest(), Events: []record.Event{{TimeUS: 100e6, Kind: record.EventMeasureEnd}}}
	for sec := range int64(100) {
		users := s.Steps[sec/20].Target
		kv := users / 10
		if sec%20 < 5 {
			kv = 0.99 // warm-up: must not count toward the step's mean
		}
		in.Telemetry = append(in.Telemetry, observe.Sample{TS: sec, TimeUS: sec*1e6 + 5e5, Source: fullScrape,
			Values: map[string]float64{observe.KVCacheUsage: kv, observe.GPUUtil: 50 + users}},
			observe.Sample{TS: sec, TimeUS: sec*1e6 + 6e5, Source: "client", Values: map[string]float64{observe.KVCacheUsage: 7}})
	}
	for i := range 1000 {
		prompt := 64 << (i % 6) // 64 .. 2048 tokens
		ttft := int64(20_000 + prompt*100)
		in.Digest.Add(&record.Result{ID: uint64(i), SendUS: int64(i) * 75_000, Stream: true, TTFTUS: ttft,
			E2EUS: ttft + 500_000, EventsUS: []int64{ttft, ttft + 20_000}, InputTokens: prompt, OutputTokens: 2})
	}
	return in
}

// reportData decodes the page's embedded REPORT object.
func reportData(t *testing.T, page string) pageData {
	t.Helper()
	m := regexp.MustCompile(`const REPORT = (.*);</script>`).FindStringSubmatch(page)
	if m == nil {
		t.Fatal("no REPORT in the page")
	}
	var d pageData
	if err := json.Unmarshal([]byte(m[1]), &d); err != nil {
		t.Fatalf("REPORT: %v", err)
	}
	return d
}

func chartByID(t *testing.T, d pageData, id string) chart {
	t.Helper()
	for _, c := range d.Charts {
		if c.ID == id {
			return c
		}
	}
	t.Fatalf("chart %s missing", id)
	return chart{}
}

func seriesByLabel(t *testing.T, c chart, label string) []*float64 {
	t.Helper()
	for _, l := range c.Series {
		if l.Label == label {
			return l.Values
		}
	}
	t.Fatalf("chart %s has no series %q", c.ID, label)
	return nil
}

// TestHTMLStagedRun: the step curves are drawn against load with the knee
// and recommended point marked, KV cache is the mean over each step's
// measured window (warm-up and the client's source left out), TTFT rises
// with input length, and goodput, compute and drift verdicts are shown.
func TestHTMLStagedRun(t *testing.T) {
	t.Parallel()
	page := render(t, stagedInput())
	d := reportData(t, page)
	thr := chartByID(t, d, "steps-throughput")
	if thr.Kind != "curve" || len(thr.X) != 5 || thr.X[4] != 16 || !strings.Contains(thr.XLabel, "users") {
		t.Errorf("throughput curve x = %v (%q), want the 5 step loads in users", thr.X, thr.XLabel)
	}
	if len(thr.VMarks) != 2 || thr.VMarks[0].T != 8 || thr.VMarks[1].T != 6 {
		t.Errorf("marks = %+v, want knee at 8 and recommended at 6", thr.VMarks)
	}
	for i, want := range []float64{10, 20, 40, 80, 160} {
		if kv := seriesByLabel(t, thr, "KV cache %")[i]; kv == nil || math.Abs(*kv-want) > 1e-9 {
			t.Errorf("step %d KV cache %% = %v, want %v (measured window only)", i+1, kv, want)
		}
	}
	if f := seriesByLabel(t, thr, "failure rate %")[4]; f == nil || *f != 4 {
		t.Errorf("step 5 failure rate %% = %v, want 4", f)
	}
	if p99 := seriesByLabel(t, chartByID(t, d, "steps-latency"), "TTFT p99"); *p99[4] != 1280 {
		t.Errorf("step 5 TTFT p99 = %v, want 1280", *p99[4])
	}
	in := chartByID(t, d, "input-ttft")
	p50 := seriesByLabel(t, in, "TTFT p50")
	if len(in.X) != 6 || !in.LogX || *p50[5] <= 5**p50[0] {
		t.Errorf("TTFT against input: x = %v, p50 first %v last %v; want 6 bins, rising", in.X, *p50[0], *p50[5])
	}
	for _, want := range []string{"Goodput", "90.0 % met the SLO (TTFT ≤ 500 ms)", "320 TFLOP/s",
		"ttft_p99_ms stable", "rose 38%", "P99 E2E drift not tested: too short", "Knee: throughput grew", "weak", `id="soak-windows"`} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	if !strings.Contains(page, `<tr class="fail"><td>FAIL</td><td><code>ttft_p99_ms stable`) {
		t.Errorf("the drifted TTFT is not a failed verdict")
	}
	if strings.Contains(page, "P99 E2E stable") {
		t.Errorf("an untested quantile is shown as a passed verdict")
	}
}

// TestHTMLSweepLeadsWithItsAnswer: a sweep's report opens with where to
// run and the knee (Diagnosis, then the headline's first cards), heads
// its pooled figures as pooled, marks the SLO operating point on the
// step charts, and stars a step's percentile its samples do not back.
func TestHTMLSweepLeadsWithItsAnswer(t *testing.T) {
	t.Parallel()
	in := stagedInput()
	s := in.Summary
	s.Operating = &record.OperatingPoint{Found: true, Load: 4, Mode: record.ModeClosed, Basis: record.OperatingSLO,
		Reason: "at most 4 users: the highest step at which every objective held"}
	for i := range s.Steps {
		s.Steps[i].Metrics.TTFT.Count = 500
		s.Steps[i].Validity.Percentiles = map[string]string{"ttft": "p99"}
	}
	s.Steps[0].Validity.Percentiles["ttft"] = "p90"
	page := render(t, in)
	diagnosis := page[strings.Index(page, `id="diagnosis"`):]
	headline := page[strings.Index(page, `id="headline"`):]
	for _, c := range []struct{ where, in, want string }{
		{"diagnosis", diagnosis[:strings.Index(diagnosis, "</section>")], "Run at: at most 4 users"},
		{"diagnosis", diagnosis[:strings.Index(diagnosis, "</section>")], "Knee: throughput grew"},
		{"headline", headline[:strings.Index(headline, "</section>")], "Headline: all steps pooled"},
		{"headline", headline[:strings.Index(headline, "</section>")], "pool all 5 steps"},
		{"steps table", page, "<td>80.0*</td>"},
	} {
		if !strings.Contains(c.in, c.want) {
			t.Errorf("%s lacks %q", c.where, c.want)
		}
	}
	if strings.Index(headline, ">Run at<") > strings.Index(headline, ">Requests<") {
		t.Errorf("the headline's first card is not where to run")
	}
	marks := chartByID(t, reportData(t, page), "steps-throughput").VMarks
	if len(marks) != 2 || marks[0].T != 8 || marks[1].T != 4 || marks[1].Label != "run at 4" {
		t.Errorf("marks = %+v, want the knee at 8 and the SLO operating point at 4", marks)
	}
}

// TestHTMLHeadlineNoFigureIsDash: a non-streamed run has no TTFT or ITL
// samples; its headline shows "-" as the terminal does, never "0 / 0".
func TestHTMLHeadlineNoFigureIsDash(t *testing.T) {
	t.Parallel()
	s := &record.Summary{SchemaVersion: 1, Name: "plain", Mode: record.ModeClosed, WindowS: 10,
		Requests: record.Requests{Total: 50, Succeeded: 50},
		Metrics:  record.Metrics{E2E: record.Stats{Count: 50, P50: 120, P99: 300}},
		Validity: &record.Validity{Valid: true, Percentiles: map[string]string{"e2e": "p90", "ttft": "none", "itl": "none"}}}
	page := render(t, &HTMLInput{Summary: s, Digest: NewDigest()})
	headline := page[strings.Index(page, `id="headline"`):]
	headline = headline[:strings.Index(headline, "</section>")]
	for _, want := range []string{"TTFT P50 / P99</div><div class=\"value\">-<", "ITL P50 / P99</div><div class=\"value\">-<", ">120.0 / 300.0*<"} {
		if !strings.Contains(headline, want) {
			t.Errorf("headline lacks %q:\n%s", want, headline)
		}
	}
	if strings.Contains(headline, ">0 / 0<") {
		t.Errorf("headline shows 0 / 0 for a figure with no samples")
	}
}

// TestHTMLHeadlineAccuracy: a run that graded replies shows its accuracy,
// and one that replayed prefix reuse its asked and served shares, among
// the headline's cards.
func TestHTMLHeadlineAccuracy(t *testing.T) {
	t.Parallel()
	s := &record.Summary{SchemaVersion: 1, Name: "graded", Mode: record.ModeClosed, WindowS: 10,
		Requests:    record.Requests{Total: 181, Succeeded: 181},
		Accuracy:    &record.Accuracy{Graded: 181, Correct: 120, Unparsable: 2, Rate: 120.0 / 181, UnparsableRate: 2.0 / 181},
		PrefixReuse: &record.PrefixReuse{Requests: 181, RequestedShare: 0.518, AchievedShare: 0.512, CachedRequests: 150}}
	page := render(t, &HTMLInput{Summary: s, Digest: NewDigest()})
	if !strings.Contains(page, `Accuracy</div><div class="value">66.3 %</div><div class="detail">120 of 181 graded replies correct · 2 unparsable`) {
		t.Errorf("headline lacks the accuracy card")
	}
	if !strings.Contains(page, `Prefix reuse</div><div class="value">51.8 % / 51.2 %</div>`) {
		t.Errorf("headline lacks the prefix reuse card")
	}
}

// TestHTMLSoakChartLeavesOutUnbackedP99: a soak window's P99 is drawn only
// when the window's values back it (ttft_backed, e2e_backed), and the
// section says how many windows were left out.
func TestHTMLSoakChartLeavesOutUnbackedP99(t *testing.T) {
	t.Parallel()
	w := func(ttft float64, ttftBacked string, e2e float64, e2eBacked string) record.SoakWindow {
		return record.SoakWindow{RequestsPerS: 1, TTFTP99: ttft, TTFTBacked: ttftBacked, E2EP99: e2e, E2EBacked: e2eBacked}
	}
	tests := []struct {
		name      string
		windows   []record.SoakWindow
		ttft, e2e []bool // which windows' points are drawn
		note      string // in the notes; "" for none about backing
	}{
		// 299 values or more in every window: every P99 drawn, no note.
		{"all backed", []record.SoakWindow{w(300, "p99", 900, "p999"), w(310, "p99", 910, "p99")},
			[]bool{true, true}, []bool{true, true}, ""},
		// The second window held only enough for a P95 of TTFT and a P50
		// of E2E: both its points left out, and said so.
		{"one short", []record.SoakWindow{w(300, "p99", 900, "p99"), w(500, "p95", 1500, "p50")},
			[]bool{true, false}, []bool{true, false}, "1 of 2 windows hold too few values"},
		// A run that did not stream has no TTFT: a gap that is not a
		// backing shortfall.
		{"no TTFT", []record.SoakWindow{w(0, "none", 900, "p99")},
			[]bool{false}, []bool{true}, ""},
		// A window with a P99 and no backing at all (4 values).
		{"none", []record.SoakWindow{w(300, "none", 900, "none")},
			[]bool{false}, []bool{false}, "1 of 1 windows hold too few values"},
	}
	for _, tc := range tests {
		s := &record.Summary{Soak: &record.Soak{WindowS: 60, Windows: tc.windows, Drift: []record.Drift{}}}
		sec := soakSection(&HTMLInput{Summary: s})
		if sec == nil || len(sec.Charts) != 1 {
			t.Fatalf("%s: no soak chart", tc.name)
		}
		for _, want := range []struct {
			label string
			drawn []bool
		}{{"TTFT p99", tc.ttft}, {"E2E p99", tc.e2e}} {
			got := seriesByLabel(t, sec.Charts[0], want.label)
			for i, d := range want.drawn {
				if (got[i] != nil) != d {
					t.Errorf("%s: %s window %d drawn %v, want %v", tc.name, want.label, i, got[i] != nil, d)
				}
			}
		}
		notes := strings.Join(sec.Notes, "\n")
		if tc.note == "" && strings.Contains(notes, "too few values") || !strings.Contains(notes, tc.note) {
			t.Errorf("%s: notes %q, want %q", tc.name, notes, tc.note)
		}
	}
}

// TestHTMLStepsChartLeavesOutUnbackedPercentiles: a step's latency
// percentile is drawn only when the step's samples back it (the rule the
// steps table stars by), and the section says how many steps it left out.
func TestHTMLStepsChartLeavesOutUnbackedPercentiles(t *testing.T) {
	t.Parallel()
	backed := func(ttft, itl, e2e string) map[string]string {
		return map[string]string{"ttft": ttft, "itl": itl, "e2e": e2e}
	}
	tests := []struct {
		name   string
		backed []map[string]string // one per step
		drawn  map[string][]bool   // line label → which steps' points are drawn
		note   string              // in the notes; "" for none about backing
	}{
		// Every step holds 299 samples or more of each metric: all drawn.
		{"all backed", []map[string]string{backed("p99", "p999", "p99"), backed("p99", "p99", "p99")},
			map[string][]bool{"TTFT p50": {true, true}, "TTFT p99": {true, true}, "ITL p99": {true, true}, "E2E p99": {true, true}}, ""},
		// The second step's 100 TTFTs back its P50 and P95, not its P99:
		// its TTFT P99 is left out, its P50 kept, and one step is counted.
		{"P99 short, P50 kept", []map[string]string{backed("p99", "p99", "p99"), backed("p95", "p99", "p99")},
			map[string][]bool{"TTFT p50": {true, true}, "TTFT p99": {true, false}, "ITL p99": {true, true}, "E2E p99": {true, true}},
			"1 of 2 steps hold too few samples"},
		// One step short of every P99 and another of the P50 too: two
		// steps counted once each, however many of their points went.
		{"two short", []map[string]string{backed("none", "p90", "p95"), backed("p50", "p99", "p90")},
			map[string][]bool{"TTFT p50": {false, true}, "TTFT p99": {false, false}, "ITL p99": {false, true}, "E2E p99": {false, false}},
			"2 of 2 steps hold too few samples"},
		// A summary without backing (older than Validity.Percentiles): the
		// table stars every figure, so the chart draws none.
		{"no backing recorded", []map[string]string{nil},
			map[string][]bool{"TTFT p50": {false}, "TTFT p99": {false}, "ITL p99": {false}, "E2E p99": {false}},
			"1 of 1 steps hold too few samples"},
	}
	for _, tc := range tests {
		s := &record.Summary{Mode: record.ModeClosed}
		for i, b := range tc.backed {
			st := record.Step{Index: i + 1, Target: float64(i + 1), Validity: record.Validity{Valid: true, Percentiles: b}}
			st.Metrics.TTFT = record.Stats{Count: 100, P50: 50, P99: 90}
			st.Metrics.ITL = record.Stats{Count: 400, P50: 20, P99: 30}
			st.Metrics.E2E = record.Stats{Count: 100, P50: 900, P99: 1500}
			s.Steps = append(s.Steps, st)
		}
		sec := stepsSection(&HTMLInput{Summary: s})
		var lat chart
		for _, c := range sec.Charts {
			if c.ID == "steps-latency" {
				lat = c
			}
		}
		for label, drawn := range tc.drawn {
			got := seriesByLabel(t, lat, label)
			for i, d := range drawn {
				if (got[i] != nil) != d {
					t.Errorf("%s: %s step %d drawn %v, want %v", tc.name, label, i+1, got[i] != nil, d)
				}
			}
		}
		notes := strings.Join(sec.Notes, "\n")
		if tc.note == "" && strings.Contains(notes, "too few samples") || !strings.Contains(notes, tc.note) {
			t.Errorf("%s: notes %q, want %q", tc.name, notes, tc.note)
		}
	}
}
