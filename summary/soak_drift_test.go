package summary

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/inferload/inferload/record"
)

// plantedSoak is a soak of span at about rate requests/s (Poisson
// arrivals) whose TTFT is log-normal (σ = 0.5) with a median of 264 ms ×
// (1 + rise × t / span) at send time t: rise 1 doubles the median
// linearly over the soak, rise 0 is no drift. E2E is TTFT + 100 ms.
// Records come in completion order, as the windower reads them.
func plantedSoak(seed uint64, span time.Duration, rate, rise float64) []*record.Result {
	rng := rand.New(rand.NewPCG(seed, 32))
	var out []*record.Result
	for t := rng.ExpFloat64() / rate; t < span.Seconds(); t += rng.ExpFloat64() / rate {
		median := 264e3 * (1 + rise*t/span.Seconds())
		ttft := int64(median * math.Exp(0.5*rng.NormFloat64()))
		out = append(out, &record.Result{Stream: true, SendUS: int64(t * 1e6), TTFTUS: ttft, E2EUS: ttft + 100e3})
	}
	slices.SortFunc(out, func(a, b *record.Result) int { return int(a.DoneUS() - b.DoneUS()) })
	return out
}

// soakDriftOf runs records through the soak's windower and drift, as a
// live run or a rebuild does, and returns each figure's drift by name.
func soakDriftOf(recs []*record.Result, span, window time.Duration) map[string]record.Drift {
	w := newWindower(0, window)
	for _, r := range recs {
		w.add(r)
	}
	sk := soakOf(w, &record.Summary{WindowS: span.Seconds()}, &SoakDesign{Window: window})
	out := map[string]record.Drift{}
	for _, d := range sk.Drift {
		out[d.Metric] = d
	}
	return out
}

// TestSoakDriftPlantedMedianRise: a TTFT median that doubles linearly
// over the soak, known by construction, is caught, with the planted
// +100% inside the interval. The first row is issue 32's soak: 90 s at
// 8.7 requests/s in 15 s windows, 6 windows of about 130 requests, which
// read "no significant trend" when only P99 was tested. Its P99 cannot
// be backed by 130 (it needs 299 a window), so it is not tested, and
// says how long a soak would test it: windows of 3 × 15 s, 5 of them.
// With 6 windows at α = 0.05/2, only a near-perfect rise is significant:
// the power measured over these 200 seeds is 94.5% (189).
func TestSoakDriftPlantedMedianRise(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name         string
		span, window time.Duration
		rate         float64
		seeds        uint64
		caught       []string // quantiles that must be caught in at least minPower of the seeds
		minPower     float64
		untested     string // a quantile too short to test, and the soak it names
		soak         string
	}{
		{"issue 32's 90 s soak", 90 * time.Second, 15 * time.Second, 8.7, 200, []string{"P50 TTFT"}, 0.90, "P99 TTFT", "a soak of at least 3m45s"},
		{"10 min, every quantile backed", 10 * time.Minute, 30 * time.Second, 10, 50, []string{"P50 TTFT", "P90 TTFT", "P99 TTFT"}, 0.98, "", ""},
	}
	for _, tt := range tests {
		caught, covered := map[string]uint64{}, map[string]uint64{}
		for seed := range tt.seeds {
			d := soakDriftOf(plantedSoak(seed, tt.span, tt.rate, 1), tt.span, tt.window)
			for _, q := range tt.caught {
				if d[q].Drifted && d[q].Change > 0 && strings.Contains(d[q].Verdict, q+" rose") {
					caught[q]++
				}
				if d[q].ChangeLow <= 1 && 1 <= d[q].ChangeHigh {
					covered[q]++
				}
			}
			if seed == 0 { // what the terminal prints, for the reader of -v
				for _, q := range append(tt.caught, tt.untested) {
					if q != "" {
						t.Logf("%s, seed 0: %s", tt.name, d[q].Verdict)
					}
				}
			}
			if u := d[tt.untested]; tt.untested != "" && (u.Tested || !strings.Contains(u.Verdict, tt.soak)) {
				t.Errorf("%s seed %d: %s tested %v, verdict %q; want untested, naming %q", tt.name, seed, tt.untested, u.Tested, u.Verdict, tt.soak)
			}
		}
		for _, q := range tt.caught {
			t.Logf("%s: %s caught in %d of %d seeds, +100%% inside its interval in %d", tt.name, q, caught[q], tt.seeds, covered[q])
			if float64(caught[q]) < tt.minPower*float64(tt.seeds) {
				t.Errorf("%s: %s drift caught in %d of %d seeds, want at least %.0f%%", tt.name, q, caught[q], tt.seeds, 100*tt.minPower)
			}
			if float64(covered[q]) < 0.9*float64(tt.seeds) {
				t.Errorf("%s: the %s interval held the planted +100%% in %d of %d seeds, want at least 90%%", tt.name, q, covered[q], tt.seeds)
			}
		}
	}
}

// TestSoakDriftFalseAlarms: with no drift, over 200 seeds, a latency is
// significant at any of its quantiles in at most α = 5% of soaks (the
// rule: its tested quantiles share α, Bonferroni), and flagged as drifted
// (significant and a change of at least 10%) in at most half of α. The
// rows are issue 32's 90 s soak (P50 and P90 tested) and a 10-minute one
// with P50, P90 and P99 all tested. Measured on these seeds: significant
// 4 and 9, drifted 2 and 3 of 200 (TTFT); over 1000 other seeds of the
// 10-minute soak, 5.3% and 2.5%: Bonferroni is near exact for quantiles
// this independent, so the significance rate sits at α, not under it.
func TestSoakDriftFalseAlarms(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name         string
		span, window time.Duration
		rate         float64
		tested       []string
	}{
		{"issue 32's 90 s soak", 90 * time.Second, 15 * time.Second, 8.7, []string{"P50 ", "P90 "}},
		{"10 min, every quantile backed", 10 * time.Minute, 30 * time.Second, 10, []string{"P50 ", "P90 ", "P99 "}},
	}
	const seeds, alpha = 200, 0.05
	for _, tt := range tests {
		significant, drifted := map[string]int{}, map[string]int{}
		for seed := range uint64(seeds) {
			d := soakDriftOf(plantedSoak(seed, tt.span, tt.rate, 0), tt.span, tt.window)
			for _, metric := range []string{"TTFT", "E2E"} {
				sig, dr := false, false
				for _, q := range tt.tested {
					v := d[q+metric]
					if !v.Tested {
						t.Fatalf("%s seed %d: %s not tested: %s", tt.name, seed, q+metric, v.Verdict)
					}
					sig, dr = sig || v.Significant, dr || v.Drifted
				}
				if sig {
					significant[metric]++
				}
				if dr {
					drifted[metric]++
				}
			}
		}
		for _, metric := range []string{"TTFT", "E2E"} {
			t.Logf("%s, no drift: %s significant in %d, drifted in %d of %d soaks", tt.name, metric, significant[metric], drifted[metric], seeds)
			if significant[metric] > seeds*alpha || drifted[metric] > seeds*alpha/2 {
				t.Errorf("%s, no drift: %s significant in %d, drifted in %d of %d soaks; want at most %d and %d",
					tt.name, metric, significant[metric], drifted[metric], seeds, int(seeds*alpha), int(seeds*alpha/2))
			}
		}
	}
}
