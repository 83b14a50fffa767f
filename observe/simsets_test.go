package observe

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/inferload/inferload/internal/enginetest"
	"github.com/inferload/inferload/sim"
)

// The simulator's metric sets are each server's own names: a scrape of
// each is recognised as that server (and its DCGM GPUs) by the built-in
// maps, so the maps and the simulator cannot drift apart.
func TestSimulatorMetricSetsDetected(t *testing.T) {
	t.Parallel()
	for _, set := range sim.MetricSets {
		t.Run(set, func(t *testing.T) {
			t.Parallel()
			_, v1 := enginetest.StartSim(t, sim.Config{Seed: 1, Metrics: set})
			fams, err := fetchMetrics(context.Background(), http.DefaultClient, strings.TrimSuffix(v1, "/v1")+"/metrics", 1<<20)
			if err != nil {
				t.Fatal(err)
			}
			if got := Detect(fams); !slices.Equal(got, []string{set, "dcgm"}) {
				t.Errorf("Detect = %v, want [%s dcgm]", got, set)
			}
		})
	}
	if _, _, err := sim.Start(sim.Config{Metrics: "ollama"}, "127.0.0.1:0"); err == nil {
		t.Error("an unknown metric set was accepted")
	}
}
