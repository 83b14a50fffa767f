package capacity_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/inferload/inferload/capacity"
	"github.com/inferload/inferload/experiment"
	"github.com/inferload/inferload/plan"
	"github.com/inferload/inferload/record"
	"github.com/inferload/inferload/schedule"
	"github.com/inferload/inferload/sim"
	"github.com/inferload/inferload/summary"
)

// fleetWorkload is the workload and load of a plan (its YAML, less the
// name and the target, which fleet never contacts) as `inferload fleet`
// reads them (the CLI's fleetWorkload, which a test here cannot import).
func fleetWorkload(t testing.TB, yaml string) capacity.FleetWorkload {
	t.Helper()
	p, err := plan.Parse("test.yaml", []byte("name: fleet\ntarget: {url: \"http://127.0.0.1:1/v1\", model: m}\n"+yaml))
	if err != nil {
		t.Fatal(err)
	}
	mix, err := experiment.Workload(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	think, err := schedule.ParseThinkTime(p.Load.ThinkTime)
	if err != nil {
		t.Fatal(err)
	}
	return capacity.FleetWorkload{Name: p.Name, Requests: mix, Seed: p.Workload.Seed,
		OpenLoop: p.Load.OpenLoop(), Users: p.Load.Concurrency, Think: think,
		Rate: p.Load.Rate, Arrival: p.Load.ArrivalProcess(), Burstiness: p.Load.Burstiness,
		NewAggregate: func() *record.Aggregate { return summary.NewAggregate(p) }}
}

// fleetOptions plans a fleet of the a100-7b preset for a chat+doc mix
// under load (a plan's load: block) with one TTFT SLO, over a short
// simulated window so brute force stays cheap.
func fleetOptions(t *testing.T, load, slo string) capacity.FleetOptions {
	t.Helper()
	w := fleetWorkload(t, fmt.Sprintf(`
workload:
  seed: 3
  classes:
    - {name: chat, weight: 4, input_tokens: "256", output_tokens: "128"}
    - {name: doc, weight: 1, input_tokens: "2048", output_tokens: "128"}
load:
%s
`, load))
	prof, err := sim.LookupProfile(sim.DefaultProfile)
	if err != nil {
		t.Fatal(err)
	}
	b, err := record.ParseSLO(slo)
	if err != nil {
		t.Fatal(err)
	}
	return capacity.FleetOptions{Workload: w, Profile: prof, Router: capacity.LeastOutstanding, SLOs: []record.SLO{b},
		Warmup: 10 * time.Second, Duration: time.Minute, MaxReplicas: 10}
}

// TestPlanFleetAgreesWithBruteForce: for open and closed loops, the
// search's answer is the smallest fleet of 1..10 that a brute-force
// simulation of every size finds passing, and the size below it failed.
func TestPlanFleetAgreesWithBruteForce(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, load, slo string
	}{
		// An open loop of 20 req/s: several replicas, by TTFT.
		{"open", "  rate: 20\n  arrival: poisson", "ttft.p99<=1500ms"},
		// 150 users thinking 2 s: several replicas, by TTFT.
		{"closed", "  concurrency: 150\n  think_time: 2s", "ttft.p99<=1s"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			o := fleetOptions(t, tt.load, tt.slo)
			got, err := capacity.PlanFleet(o)
			if err != nil {
				t.Fatal(err)
			}
			brute := 0
			for n := 1; n <= o.MaxReplicas && brute == 0; n++ {
				passed, err := capacity.SimulateFleetSize(o, n)
				if err != nil {
					t.Fatal(err)
				}
				if passed {
					brute = n
				}
			}
			t.Logf("%s: search %d (per replica %.3g, probes %d), brute force %d: %s", tt.name, got.Replicas, got.PerReplica, len(got.Probes), brute, got.Reason)
			if brute < 2 {
				t.Fatalf("the case is too easy to test a search: brute force needs %d replicas", brute)
			}
			if got.Replicas != brute {
				t.Errorf("search says %d replicas, brute force %d", got.Replicas, brute)
			}
			var below *record.FleetProbe
			for i := range got.Probes {
				if got.Probes[i].Replicas == got.Replicas-1 {
					below = &got.Probes[i]
				}
			}
			if below == nil || below.Passed {
				t.Errorf("the size below the answer was not simulated, or passed: %+v", below)
			}
			if !strings.Contains(got.Reason, fmt.Sprintf("%d replicas meet", got.Replicas)) {
				t.Errorf("reason %q does not state the answer", got.Reason)
			}
		})
	}
}

// TestPlanFleetRefusesWhatItCannotPlan: bad options say why.
func TestPlanFleetRefusesWhatItCannotPlan(t *testing.T) {
	t.Parallel()
	o := fleetOptions(t, "  concurrency: 8", "ttft.p99<=1s")
	o.SLOs = nil
	if _, err := capacity.PlanFleet(o); err == nil || !strings.Contains(err.Error(), "SLO") {
		t.Errorf("no SLO: %v, want an error asking for one", err)
	}
	o = fleetOptions(t, "  concurrency: 8", "ttft.p99<=1s")
	o.PeakRate = 5
	if _, err := capacity.PlanFleet(o); err == nil || !strings.Contains(err.Error(), "--peak-rate") {
		t.Errorf("peak rate on a closed loop: %v, want an error naming the mismatch", err)
	}
	o = fleetOptions(t, "  concurrency: 8", "ttft.p99<=1s")
	o.Headroom = -1
	if _, err := capacity.PlanFleet(o); err == nil {
		t.Error("negative headroom: want an error")
	}
}

// TestPlanFleetSaysWhenNothingSuffices: an SLO no fleet can meet (a TTFT
// below one prefill) gets no answer and a reason that says so.
func TestPlanFleetSaysWhenNothingSuffices(t *testing.T) {
	t.Parallel()
	o := fleetOptions(t, "  rate: 4", "ttft.p99<=1ms")
	o.MaxReplicas = 3
	got, err := capacity.PlanFleet(o)
	if err != nil {
		t.Fatal(err)
	}
	if got.Replicas != 0 || !strings.Contains(got.Reason, "no fleet of up to 3") {
		t.Errorf("got %d replicas, reason %q; want none and a reason naming the bound", got.Replicas, got.Reason)
	}
}

// TestColdStart: scaling 1 → 3 replicas while 20 req/s ramps in over
// 30 s. Replicas that take 3 minutes to start leave the one replica
// drowning (the start-up window misses its SLO, the early windows meet
// little of it, the late ones recover); replicas up in 5 s, before the
// load has grown, keep the SLO.
func TestColdStart(t *testing.T) {
	t.Parallel()
	o := fleetOptions(t, "  rate: 20\n  arrival: poisson", "ttft.p99<=1500ms")
	slow, err := capacity.SimulateColdStart(o, capacity.ColdStart{From: 1, To: 3, ColdStart: 3 * time.Minute, Ramp: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range slow.Windows {
		t.Logf("slow start, %4.0f s: %d up, %4d requests, %3.0f%% met, TTFT p99 %.0f ms", w.StartS, w.Replicas, w.Requests, w.MetShare*100, w.TTFT.P99)
	}
	if slow.Passed {
		t.Errorf("a 3-minute start judged as keeping the SLO: %q", slow.Reasons)
	}
	first, last := slow.Windows[2], slow.Windows[len(slow.Windows)-1]
	if first.MetShare > 0.5 || last.MetShare < 0.95 || last.Replicas != 3 {
		t.Errorf("windows: %.0f%% met a minute in (want under 50%%), %.0f%% at the end with %d up (want 95%%+, 3)", first.MetShare*100, last.MetShare*100, last.Replicas)
	}
	fast, err := capacity.SimulateColdStart(o, capacity.ColdStart{From: 1, To: 3, ColdStart: 5 * time.Second, Ramp: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if !fast.Passed {
		t.Errorf("a 5-second start under a 30-second ramp missed the SLO: %q", fast.Reasons)
	}
	if _, err := capacity.SimulateColdStart(o, capacity.ColdStart{From: 3, To: 3, ColdStart: time.Minute}); err == nil {
		t.Error("scaling 3 to 3: want an error")
	}
}

// BenchmarkPlanFleet is the whole search of `inferload fleet
// --peak-users 2000 --think-time 5s --input-tokens 512 --output-tokens 256
// --slo 'ttft.p99<=2s' --slo 'tpot.p99<=80ms'` (20% headroom, 10 virtual
// minutes per size): the one-replica estimate and the sizes around the
// answer.
func BenchmarkPlanFleet(b *testing.B) {
	w := fleetWorkload(b, `
workload:
  seed: 1
  classes:
    - {name: default, weight: 1, input_tokens: "512", output_tokens: "256"}
load:
  concurrency: 2000
  think_time: 5s
`)
	prof, err := sim.LookupProfile(sim.DefaultProfile)
	if err != nil {
		b.Fatal(err)
	}
	var slos []record.SLO
	for _, s := range []string{"ttft.p99<=2s", "tpot.p99<=80ms"} {
		v, err := record.ParseSLO(s)
		if err != nil {
			b.Fatal(err)
		}
		slos = append(slos, v)
	}
	var got *record.Fleet
	for range b.N {
		if got, err = capacity.PlanFleet(capacity.FleetOptions{Workload: w, Profile: prof, Router: capacity.LeastOutstanding, SLOs: slos, Headroom: 0.2}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(got.Replicas), "replicas")
	b.ReportMetric(float64(len(got.Probes)), "sizes")
}
