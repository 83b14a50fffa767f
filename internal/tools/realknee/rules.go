package main

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/inferload/inferload/analyze"
	"github.com/inferload/inferload/internal/enginetest"
	"github.com/inferload/inferload/record"
)

// workload is what one configuration sends. The wide model's requests
// are shorter: on one thread here its first 31-token prompt took 1.2 s,
// and with 16 → 8 tokens one user still runs only about 3 requests/s
// (tiny: 5-12 with 64 → 16), which sets how long every run must be.
type workload struct {
	Input, Output int
}

var workloads = map[string]workload{
	"tiny": {Input: 64, Output: 16},
	"wide": {Input: 16, Output: 8},
}

// parseConfigs reads "tiny:1,wide:8" (model:slots, one thread each).
func parseConfigs(s string) ([]enginetest.Llama, error) {
	var out []enginetest.Llama
	for _, part := range strings.Split(s, ",") {
		model, slots, ok := strings.Cut(strings.TrimSpace(part), ":")
		n, err := strconv.Atoi(slots)
		if _, known := workloads[model]; !ok || err != nil || n < 1 || !known {
			return nil, fmt.Errorf("configuration %q: want MODEL:SLOTS, MODEL tiny or wide, SLOTS at least 1", part)
		}
		out = append(out, enginetest.Llama{Model: model, Slots: n, Threads: 1})
	}
	return out, nil
}

// oneUser is a configuration's first probe: one user, nothing waiting
// for a slot.
type oneUser struct {
	TTFTP90MS, E2EP50MS, RequestsPerS float64
}

// waitsAllowed is how many one-user services of waiting the SLO allows
// at its p90: midway between one and two, because with closed-loop users
// on one slot the k-th user beyond the slots waits about k services, so
// a whole number would put the bound on a step rather than between two.
const waitsAllowed = 1.5

// sloFor is the objective a configuration is judged by: TTFT p90 within
// one user's TTFT p90 plus waitsAllowed of one user's E2E p50, rounded
// up to 5 ms: a bound set by the server's own speed, so each
// configuration has a knee to find, wherever its slots put it.
func sloFor(u oneUser) record.SLO {
	bound := math.Ceil((u.TTFTP90MS+waitsAllowed*u.E2EP50MS)/5) * 5
	return record.SLO{TTFTMs: bound, Share: 0.90}
}

// searchFor is the find-capacity search of a configuration. Closed loop
// (users): from 1 user to 4 per slot. Open loop (requests/s, Poisson):
// from a quarter of one user's rate (on a host busy with other work,
// half of it was already too much for the tiny model's one slot, its
// decode steps stretched 3-6× in stretches) up to twice the rate of
// every slot serving one user each.
func searchFor(mode string, u oneUser, slots int) analyze.SearchOptions {
	if mode == record.ModeClosed {
		return analyze.SearchOptions{Low: 1, High: float64(4 * slots), Whole: true, Precision: analyze.DefaultSearch.Precision, MaxProbes: 8}
	}
	round := func(v float64) float64 { return math.Round(v*1000) / 1000 }
	return analyze.SearchOptions{Low: round(u.RequestsPerS / 4), High: round(2 * float64(slots) * u.RequestsPerS),
		Precision: analyze.DefaultSearch.Precision, MaxProbes: 8}
}

// withConfirm is search s with confirm confirmations of its answer and
// the probes to make them (analyze.ProbesPerConfirmation each: on the
// 8-slot server of TRUTH.md, -confirm 2 found 9 users in 8 probes, failed
// a confirmation there and needed 2 more at 8 users, 11 in all, where one
// more probe a confirmation left the answer UNCONFIRMED).
func withConfirm(s analyze.SearchOptions, confirm int) analyze.SearchOptions {
	s.Confirm = confirm
	s.MaxProbes += analyze.ProbesPerConfirmation * confirm
	return s
}

// slowestRate is the fewest requests/s a run of the search may see: its
// lowest load's (one user sends one user's rate).
func slowestRate(mode string, u oneUser, s analyze.SearchOptions) float64 {
	if mode == record.ModeClosed {
		return u.RequestsPerS * s.Low
	}
	return s.Low
}

// above is the load 25% above answer: for users the next whole number
// at or above it (2 users above 1: +100%, 3 above 2: +50%; +25% exactly
// from 4 users).
func above(mode string, answer float64) float64 {
	if mode == record.ModeClosed {
		return math.Ceil(answer * 1.25)
	}
	return math.Round(answer*1.25*1000) / 1000
}

// hostMargin is how much slower than the one-user probe a run is sized
// to survive: on the busy host of TRUTH.md the server's one-user E2E p50
// went from 75 to 191 ms between probes minutes apart, and a probe sized
// for the first speed drew 23 requests of the 60 it was sized for.
const hostMargin = 2

// measuredFor is how long a run at rate must measure (warm-up excluded)
// to expect samples requests at the rate divided by hostMargin.
func measuredFor(rate float64, samples int) time.Duration {
	return time.Duration(math.Ceil(float64(samples)*hostMargin/rate*10) / 10 * float64(time.Second))
}

// warmupFor is a run's warm-up: three one-user requests' time, at least
// 2 s, so the first measured requests find the server past its start.
func warmupFor(u oneUser) time.Duration {
	return max(2*time.Second, time.Duration(3*u.E2EP50MS*float64(time.Millisecond)).Round(100*time.Millisecond))
}

// rerun is one run at a fixed load after the search.
type rerun struct {
	Load float64
	// TTFTP90MS is the run's measured TTFT p90; Samples the measured
	// requests it was taken over.
	TTFTP90MS   float64
	Samples     int64
	FailureRate float64
	Valid       bool
	// Confident: the run would pass find-capacity's own probe rule (the
	// p90 shown within the bound at 95% confidence).
	Confident bool
}

// holds is the rerun verdict: the SLO holds when the run's measured TTFT
// p90 is within the bound and its failure rate within find-capacity's
// (1%): what a user checking the plan with `inferload run --threshold
// 'ttft.p90 <= BOUND'` sees. A run with no measured request holds
// nothing.
func (r rerun) holds(slo record.SLO) bool {
	return r.Samples > 0 && r.TTFTP90MS <= slo.TTFTMs && r.FailureRate <= analyze.DefaultMaxFailureRate
}

// count is how many of runs satisfy f.
func count(runs []rerun, f func(rerun) bool) int {
	n := 0
	for _, r := range runs {
		if f(r) {
			n++
		}
	}
	return n
}
