package main

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/inferload/inferload/analyze"
	"github.com/inferload/inferload/record"
)

func TestParseConfigs(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in   string
		want string // model:slots:threads, comma-joined; "" for an error
	}{
		{"tiny:1,wide:8", "tiny:1:1,wide:8:1"}, // the suite's form, one thread each
		{" tiny:4 ", "tiny:4:1"},               // spaces around a configuration are fine
		{"tiny", ""},                           // no slots
		{"tiny:0", ""},                         // no slot at all cannot serve
		{"huge:2", ""},                         // a model the scripts do not write
		{"tiny:x", ""},                         // slots not a number
	} {
		cs, err := parseConfigs(tc.in)
		var got []string
		for _, c := range cs {
			got = append(got, strings.Join([]string{c.Model, strconv.Itoa(c.Slots), strconv.Itoa(c.Threads)}, ":"))
		}
		if g := strings.Join(got, ","); (err != nil) != (tc.want == "") || g != tc.want {
			t.Errorf("parseConfigs(%q) = %q, %v; want %q", tc.in, g, err, tc.want)
		}
	}
}

func TestSLOFor(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		u    oneUser
		want float64
	}{
		{oneUser{TTFTP90MS: 17.1, E2EP50MS: 75.6}, 135},   // 17.1 + 113.4 = 130.5 rounds up to the next 5 ms
		{oneUser{TTFTP90MS: 20, E2EP50MS: 80}, 140},       // 140 is on a 5 ms step: kept
		{oneUser{TTFTP90MS: 900.2, E2EP50MS: 1200}, 2705}, // a slow model's bound scales with it
	} {
		got := sloFor(tc.u)
		if got.TTFTMs != tc.want || got.Share != 0.90 || got.E2EMs != 0 || got.TPOTMs != 0 {
			t.Errorf("sloFor(%+v) = %+v, want TTFT p90 ≤ %g ms only", tc.u, got, tc.want)
		}
	}
}

func TestSearchFor(t *testing.T) {
	t.Parallel()
	u := oneUser{RequestsPerS: 12}
	for _, tc := range []struct {
		mode    string
		want    analyze.SearchOptions
		slowest float64
	}{
		// 4 slots, closed: 1 to 16 users; the 1-user probe sees 12 requests/s.
		{record.ModeClosed, analyze.SearchOptions{Low: 1, High: 16, Whole: true, Precision: 0.10, MaxProbes: 8}, 12},
		// open: from 3/s (a quarter of one user's) to 96/s (twice 4 slots at one user's).
		{record.ModeOpen, analyze.SearchOptions{Low: 3, High: 96, Precision: 0.10, MaxProbes: 8}, 3},
	} {
		got := searchFor(tc.mode, u, 4)
		if got != tc.want || slowestRate(tc.mode, u, got) != tc.slowest {
			t.Errorf("%s: searchFor = %+v, slowest %g; want %+v, %g", tc.mode, got, slowestRate(tc.mode, u, got), tc.want, tc.slowest)
		}
	}
}

func TestAbove(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		mode          string
		answer, above float64
	}{
		{record.ModeClosed, 1, 2},    // +25% of one user is a second one
		{record.ModeClosed, 4, 5},    // exactly +25%
		{record.ModeClosed, 6, 8},    // 7.5 rounds up
		{record.ModeOpen, 2.2, 2.75}, // rates are exact (to 0.001)
		{record.ModeOpen, 1.111, 1.389},
	} {
		if got := above(tc.mode, tc.answer); got != tc.above {
			t.Errorf("above(%s, %g) = %g, want %g", tc.mode, tc.answer, got, tc.above)
		}
	}
}

func TestDurations(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		rate    float64
		samples int
		want    time.Duration
	}{
		{4, 100, 50 * time.Second},         // 100 requests at 2/s, half the rate
		{3, 100, 66700 * time.Millisecond}, // 66.67 s, rounded up to a tenth
		{0.5, 40, 160 * time.Second},       // a slow rate needs a long run
	} {
		if got := measuredFor(tc.rate, tc.samples); got != tc.want {
			t.Errorf("measuredFor(%g, %d) = %s, want %s", tc.rate, tc.samples, got, tc.want)
		}
	}
	if got := warmupFor(oneUser{E2EP50MS: 75}); got != 2*time.Second {
		t.Errorf("warm-up for a 75 ms request: %s, want the 2 s floor", got)
	}
	if got := warmupFor(oneUser{E2EP50MS: 1234}); got != 3700*time.Millisecond {
		t.Errorf("warm-up for a 1.234 s request: %s, want 3 of them, 3.7 s", got)
	}
}

func TestRerunHolds(t *testing.T) {
	t.Parallel()
	slo := record.SLO{TTFTMs: 100, Share: 0.9}
	for _, tc := range []struct {
		r    rerun
		want bool
	}{
		{rerun{TTFTP90MS: 99, Samples: 100}, true},                     // p90 within the bound
		{rerun{TTFTP90MS: 100, Samples: 100}, true},                    // on the bound is within it
		{rerun{TTFTP90MS: 101, Samples: 100}, false},                   // above it
		{rerun{TTFTP90MS: 50, Samples: 100, FailureRate: 0.02}, false}, // fast, but 2% failed: above find-capacity's 1%
		{rerun{TTFTP90MS: 50, Samples: 100, FailureRate: 0.01}, true},  // 1% failed is allowed
		{rerun{}, false}, // no measured request holds nothing
	} {
		if got := tc.r.holds(slo); got != tc.want {
			t.Errorf("%+v holds = %v, want %v", tc.r, got, tc.want)
		}
	}
}

// cliff is a server whose loads up to safe pass every probe, edge passes
// only its first probe (a good phase, as 9 users on TRUTH.md's 8-slot
// server) and anything above edge fails.
type cliff struct{ safe, edge float64 }

func (c cliff) passes(load float64, earlier int) bool {
	return load <= c.safe || (load == c.edge && earlier == 0)
}

// search runs analyze.NextLoad against c: the answer, its confirmations
// and the probes it took.
func (c cliff) search(o analyze.SearchOptions) (answer float64, confirmed, probes int) {
	var passed, failed []float64
	seen := map[float64]int{}
	for {
		load, done := analyze.NextLoad(passed, failed, o)
		if done {
			answer = analyze.Capacity(passed, failed)
			return answer, analyze.Confirmations(passed, answer), len(passed) + len(failed)
		}
		if c.passes(load, seen[load]) {
			passed = append(passed, load)
		} else {
			failed = append(failed, load)
		}
		seen[load]++
	}
}

// TestWithConfirmBudget: the budget -confirm N gives lets a search whose
// first answer fails its confirmation step back and confirm the load
// below N times, so it ends confirmed at the safe load.
func TestWithConfirmBudget(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		slots   int
		c       cliff
		confirm int
	}{
		// TRUTH.md's run: 8 slots, 9 users passing once. 8 probes find
		// 9, its confirmation fails, 8 needs its own: 10 probes (1) and
		// 11 (2); the old budget of 8 + N ran out at 9 and 10.
		{"8 slots, confirm 1", 8, cliff{8, 9}, 1},
		{"8 slots, confirm 2", 8, cliff{8, 9}, 2},
		{"8 slots, confirm 3", 8, cliff{8, 9}, 3},
		// 4 slots, 6 users passing once: the step back leaves a gap (4
		// passed, 6 failed) that a bisection probe at 5 closes first.
		{"gap after the step back, confirm 2", 4, cliff{5, 6}, 2},
	} {
		s := withConfirm(searchFor(record.ModeClosed, oneUser{RequestsPerS: 5}, tc.slots), tc.confirm)
		answer, confirmed, probes := tc.c.search(s)
		if s.Confirm != tc.confirm || answer != tc.c.safe || confirmed != tc.confirm {
			t.Errorf("%s: answer %g confirmed %d of %d (%d of %d probes); want %g confirmed %d times",
				tc.name, answer, confirmed, s.Confirm, probes, s.MaxProbes, tc.c.safe, tc.confirm)
		}
	}
}
