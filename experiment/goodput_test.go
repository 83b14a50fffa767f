package experiment

import (
	"context"
	"fmt"
	"testing"

	"github.com/inferload/inferload/sim"
)

// goodputPlan has one class whose SLO nothing can meet and one whose SLO
// everything meets, and declares the model's size.
const goodputPlan = `
target: {url: %s}
load: {concurrency: 4, requests: 60, grace: 10s}
workload:
  slo: {ttft_ms: 60000, e2e_ms: 60000}
  classes:
    - {name: easy, weight: 1, input_tokens: 32, output_tokens: 8}
    - {name: strict, weight: 1, input_tokens: 32, output_tokens: 8, slo: {ttft_ms: 0.001}}
compute: {params_b: 8, layers: 32, hidden: 4096}
`

// End to end: goodput is judged by each class's own SLO, the FLOPs
// estimate is present, and a rebuild reproduces both byte for byte.
func TestGoodputAndComputeAgainstSimulator(t *testing.T) {
	t.Parallel()
	url := tinySim(t, sim.Faults{})
	res, err := Run(context.Background(), testPlan(t, fmt.Sprintf(goodputPlan, url)), Options{})
	if err != nil {
		t.Fatal(err)
	}
	s := res.Summary
	easy, strict := s.Classes["easy"], s.Classes["strict"]
	if easy == nil || strict == nil {
		t.Fatalf("classes %v", s.Classes)
	}
	// easy inherits the run's 60 s bounds and meets them; strict's own
	// 1 µs TTFT bound replaces the run's and is never met.
	if easy.Goodput.Attainment != 1 || easy.Goodput.SLO.TTFTMs != 60000 || easy.Goodput.SLO.E2EMs != 60000 {
		t.Errorf("easy goodput %+v", easy.Goodput)
	}
	if strict.Goodput.Met != 0 || strict.Goodput.SLO.TTFTMs != 0.001 || strict.Goodput.SLO.E2EMs != 60000 {
		t.Errorf("strict goodput %+v", strict.Goodput)
	}
	if s.Goodput.Met != easy.Goodput.Met || s.Goodput.RequestsPerS > s.Throughput.RequestsPerS {
		t.Errorf("run goodput %+v, throughput %+v", s.Goodput, s.Throughput)
	}
	if c := s.Compute; c == nil || c.PrefillFLOPs <= 0 || c.DecodeFLOPs <= 0 || c.AchievedFLOPPerS <= 0 || c.OfferedFLOPPerS <= 0 {
		t.Errorf("compute %+v", c)
	}
	expectRebuildIdentical(t, res.Dir)
}
