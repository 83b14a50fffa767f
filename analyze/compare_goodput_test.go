package analyze

import (
	"slices"
	"strings"
	"testing"

	"github.com/inferload/inferload/record"
)

var (
	chatSLO  = record.SLO{TTFTMs: 500, E2EMs: 2000}
	agentSLO = record.SLO{E2EMs: 3000}
)

// goodputRun is a run whose summary.json counted, of n sessions of class
// chat and n tasks of class agent, sessionMet and taskMet within their
// SLOs, the met ones spread evenly over the run (every batch alike).
func goodputRun(name string, n, sessionMet, taskMet int64, chat, agent record.SLO) *RunSamples {
	rs := NewRunSamples(name)
	rs.SessionGoodput = map[string]GoodputShare{"chat": {SLO: chat, Met: sessionMet, Total: n}}
	rs.TaskGoodput = map[string]GoodputShare{"agent": {SLO: agent, Met: taskMet, Total: n}}
	for _, met := range evenly(n, sessionMet) {
		rs.addVerdict("session_goodput", verdict{"chat", met})
	}
	for _, met := range evenly(n, taskMet) {
		rs.addVerdict("task_goodput", verdict{"agent", met})
	}
	return rs
}

// evenly is n flags, met of them set, spread as evenly as they go.
func evenly(n, met int64) []bool {
	out := make([]bool, n)
	for i := range n {
		out[i] = (i+1)*met/n > i*met/n
	}
	return out
}

// alternating is a session goodput run of class chat whose batches (of
// DefaultBatches) alternate between shares hi and lo, n sessions in all.
func alternating(name string, n int64, hi, lo float64) *RunSamples {
	rs := NewRunSamples(name)
	per := n / DefaultBatches
	var met int64
	for b := range int64(DefaultBatches) {
		share := hi
		if b%2 == 1 {
			share = lo
		}
		m := int64(share * float64(per))
		met += m
		for _, f := range evenly(per, m) {
			rs.addVerdict("session_goodput", verdict{"chat", f})
		}
	}
	rs.SessionGoodput = map[string]GoodputShare{"chat": {SLO: chatSLO, Met: met, Total: per * DefaultBatches}}
	return rs
}

// TestCompareGoodputOneRunEach: with one run a side, a goodput row passes
// the batch-means check as failure_rate does: a drop every batch shows
// stands; one the batches' own spread can explain cannot be told.
func TestCompareGoodputOneRunEach(t *testing.T) {
	t.Parallel()
	limits := []Limit{{Metric: "session_goodput", Absolute: true, Value: 0.02}}
	tests := []struct {
		name      string
		base, cur *RunSamples
		change    string
	}{
		// 90% → 80% in every batch of 4000 sessions: the batches agree.
		{"steady drop", goodputRun("base", 4000, 3600, 3600, chatSLO, agentSLO), goodputRun("cur", 4000, 3200, 3200, chatSLO, agentSLO), "worse"},
		// 90% → 85% of 4000 sessions: the two-proportion test is sure
		// (about 7 standard errors), but each run swings 20 points from
		// batch to batch (100/80%, 95/75%), four times the drop.
		{"drift inside each run", alternating("base", 4000, 1.0, 0.8), alternating("cur", 4000, 0.95, 0.75), ChangeCannotTell},
	}
	for _, tt := range tests {
		c := Compare(tt.base, tt.cur, CompareOptions{Limits: limits})
		for _, metric := range []string{"session_goodput", "classes.chat.session_goodput"} {
			d := deltaOf(t, c, metric)
			if d.Change != tt.change || d.Runs == nil || d.Runs.Test != TestBatchMeans {
				t.Errorf("%s: %s %v, runs %+v; want %s by %s", tt.name, metric, d, d.Runs, tt.change, TestBatchMeans)
			}
		}
		if d := deltaOf(t, c, "session_goodput"); d.Regression != (tt.change == "worse") {
			t.Errorf("%s: regression %v", tt.name, d.Regression)
		}
	}
}

// TestRunSamplesGoodputVerdicts: Add judges each session and task as
// summary.json's goodput does, in the order they finish: a warm-up one
// and a canceled session are not counted, a failed one counts unmet.
func TestRunSamplesGoodputVerdicts(t *testing.T) {
	t.Parallel()
	slo := record.SLO{E2EMs: 1000}
	rs := NewRunSamples("run")
	rs.SessionGoodput = map[string]GoodputShare{"chat": {SLO: slo}}
	rs.TaskGoodput = map[string]GoodputShare{"agent": {SLO: slo}}
	session := func(id uint64, e2eMS int64, err record.ErrorKind, warm bool) *record.Result {
		return &record.Result{Class: "chat", Session: id, Turn: 1, SessionCalls: 1, E2EUS: e2eMS * 1000, Error: err, Warmup: warm}
	}
	task := func(stepMS int64, kind string, err record.ErrorKind, warm bool) *record.Result {
		return &record.Result{Class: "agent", E2EUS: 5_000_000, Error: err, Warmup: warm,
			Chain: []record.ChainStep{{Name: "call", Kind: kind, DurUS: stepMS * 1000}}}
	}
	for _, r := range []*record.Result{
		session(1, 500, record.ErrNone, false),      // met
		session(2, 1500, record.ErrNone, false),     // over the bound
		session(3, 500, record.ErrNone, true),       // warm-up: not counted
		session(4, 500, record.ErrHTTP5xx, false),   // failed: counted, unmet
		session(5, 500, record.ErrCanceled, false),  // canceled: not counted
		task(500, "chat", record.ErrNone, false),    // met
		task(1500, "chat", record.ErrNone, false),   // a model call over the bound
		task(1500, "tool", record.ErrNone, false),   // a tool is no model call: met
		task(500, "chat", record.ErrNone, true),     // warm-up: not counted
		task(500, "chat", record.ErrHTTP5xx, false), // failed: unmet
	} {
		rs.Add(r)
	}
	pooled := []string{"chat", "agent"}
	for _, tt := range []struct {
		metric string
		want   []bool
	}{
		{"session_goodput", []bool{true, false, false}},
		{"classes.agent.task_goodput", []bool{true, false, true, false}},
	} {
		if got := orderedVerdicts(rs, tt.metric, pooled); !slices.Equal(got, tt.want) {
			t.Errorf("%s: %v, want %v", tt.metric, got, tt.want)
		}
	}
}

// TestCompareGoodput: session and task goodput are compared by the
// two-proportion test on the shares summary.json counted; a drop beyond
// the limit regresses, a smaller one (significant or not) does not, and
// runs whose SLOs differ get no row but a warning naming both SLOs.
func TestCompareGoodput(t *testing.T) {
	t.Parallel()
	limits := []Limit{{Metric: "session_goodput", Absolute: true, Value: 0.05}, {Metric: "task_goodput", Absolute: true, Value: 0.05}}
	base := goodputRun("base", 10000, 9000, 9000, chatSLO, agentSLO)
	tests := []struct {
		name       string
		cur        *RunSamples
		change     string // of both figures, overall and per class
		regression bool
		diff       float64 // the known drop in share
	}{
		// 90% → 80% of 10000: a 10-point drop, twice the limit.
		{"drop beyond the limit", goodputRun("cur", 10000, 8000, 8000, chatSLO, agentSLO), "worse", true, -0.10},
		// 90% → 87%: significant (±1 point), but its worse end (~4
		// points) is inside the 5-point limit.
		{"drop inside the limit", goodputRun("cur", 10000, 8700, 8700, chatSLO, agentSLO), "worse", false, -0.03},
		// 90% → 89.5%: within the noise of 10000 sessions.
		{"no drop", goodputRun("cur", 10000, 8950, 8950, chatSLO, agentSLO), "same", false, -0.005},
		// 90% → 95%: better never regresses.
		{"rise", goodputRun("cur", 10000, 9500, 9500, chatSLO, agentSLO), "better", false, 0.05},
	}
	for _, tt := range tests {
		c := Compare(base, tt.cur, CompareOptions{Limits: limits})
		for _, metric := range []string{"session_goodput", "classes.chat.session_goodput", "task_goodput", "classes.agent.task_goodput"} {
			d := deltaOf(t, c, metric)
			if d.Change != tt.change || d.Test != TestTwoProportion || !near(d.Diff, tt.diff) {
				t.Errorf("%s: %v, want %s by %+.3f", tt.name, d, tt.change, tt.diff)
			}
		}
		for _, metric := range []string{"session_goodput", "task_goodput"} {
			if got := deltaOf(t, c, metric).Regression; got != tt.regression {
				t.Errorf("%s: %s regression %v, want %v", tt.name, metric, got, tt.regression)
			}
		}
		if len(c.Warnings) != 0 || len(c.UnusedLimits) != 0 {
			t.Errorf("%s: warnings %q, unused limits %q", tt.name, c.Warnings, c.UnusedLimits)
		}
	}
}

// TestCompareGoodputSLOs: a class is compared only when both runs judged
// it by the same bounded SLO.
func TestCompareGoodputSLOs(t *testing.T) {
	t.Parallel()
	base := goodputRun("base", 1000, 900, 900, chatSLO, agentSLO)
	tests := []struct {
		name    string
		cur     *RunSamples
		rows    []string // the goodput rows the comparison has
		warning string   // a warning holding this; "" for none
	}{
		// The same SLOs: every row.
		{"same SLOs", goodputRun("cur", 1000, 500, 500, chatSLO, agentSLO),
			[]string{"session_goodput", "classes.chat.session_goodput", "task_goodput", "classes.agent.task_goodput"}, ""},
		// The current run's chat SLO is looser: its share would rise by
		// the SLO alone, so sessions are not compared; tasks still are.
		{"session SLO differs", goodputRun("cur", 1000, 500, 500, record.SLO{TTFTMs: 1000, E2EMs: 2000}, agentSLO),
			[]string{"task_goodput", "classes.agent.task_goodput"},
			"session_goodput of class chat not compared: the runs' SLOs differ (baseline TTFT ≤ 500ms, E2E ≤ 2s, current TTFT ≤ 1s, E2E ≤ 2s)"},
		// The current run had no task SLO: every task would meet it.
		{"task SLO dropped", goodputRun("cur", 1000, 500, 500, chatSLO, record.SLO{}),
			[]string{"session_goodput", "classes.chat.session_goodput"},
			"task_goodput of class agent not compared: the runs' SLOs differ (baseline E2E ≤ 3s, current no bound)"},
	}
	for _, tt := range tests {
		c := Compare(base, tt.cur, CompareOptions{Limits: []Limit{}})
		var rows []string
		for _, d := range c.Deltas {
			rows = append(rows, d.Metric)
		}
		if strings.Join(rows, " ") != strings.Join(tt.rows, " ") {
			t.Errorf("%s: rows %q, want %q", tt.name, rows, tt.rows)
		}
		got := strings.Join(c.Warnings, "\n")
		if (tt.warning == "") != (got == "") || !strings.Contains(got, tt.warning) {
			t.Errorf("%s: warnings %q, want %q", tt.name, got, tt.warning)
		}
	}
	// Neither run had an SLO: every completed session "met" it, which is
	// no goodput; no row and nothing to warn of.
	none := goodputRun("none", 1000, 900, 900, record.SLO{}, record.SLO{})
	if c := Compare(none, goodputRun("none2", 1000, 500, 500, record.SLO{}, record.SLO{}), CompareOptions{}); len(c.Deltas) != 0 || len(c.Warnings) != 0 {
		t.Errorf("unbounded SLOs compared: %v %q", c.Deltas, c.Warnings)
	}
}

// TestCompareGoodputRepeats: with repeats each run's own share is a unit
// of the runs check; repeats judged by different SLOs are not pooled.
func TestCompareGoodputRepeats(t *testing.T) {
	t.Parallel()
	runs := func(name string, met ...int64) []*RunSamples {
		var out []*RunSamples
		for _, m := range met {
			out = append(out, goodputRun(name, 1000, m, m, chatSLO, agentSLO))
		}
		return out
	}
	limits := []Limit{{Metric: "session_goodput", Absolute: true, Value: 0.05}}
	// 90 ± 1% against 80 ± 1%: the runs agree on a 10-point drop.
	c := CompareRuns(runs("base", 890, 900, 910), runs("cur", 790, 800, 810), CompareOptions{Limits: limits})
	d := deltaOf(t, c, "session_goodput")
	if d.Runs == nil || d.Runs.Test != TestBetweenRuns || !near(d.Runs.Diff, -0.10) || !d.Regression {
		t.Errorf("repeats: %v, runs %+v", d, d.Runs)
	}
	// The same pooled shares, but the runs scatter (70%-100%): the
	// between-runs check cannot tell the drop from run-to-run noise.
	c = CompareRuns(runs("base", 800, 900, 1000), runs("cur", 700, 800, 900), CompareOptions{Limits: limits})
	if d := deltaOf(t, c, "session_goodput"); d.Change != ChangeCannotTell || d.Regression {
		t.Errorf("scattered repeats: %v, runs %+v", d, d.Runs)
	}
	mixed := runs("base", 900, 900)
	mixed[1].SessionGoodput["chat"] = GoodputShare{SLO: record.SLO{TTFTMs: 900}, Met: 900, Total: 1000}
	c = CompareRuns(mixed, runs("cur", 800, 800), CompareOptions{Limits: []Limit{}})
	if indexDelta(c.Deltas, "session_goodput") >= 0 || !strings.Contains(strings.Join(c.Warnings, "\n"), "baseline runs were judged by different SLOs") {
		t.Errorf("repeats of mixed SLOs pooled: %v %q", c.Deltas, c.Warnings)
	}
}

func near(a, b float64) bool { return a-b < 1e-9 && b-a < 1e-9 }
