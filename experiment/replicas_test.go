package experiment

import (
	"fmt"
	"testing"

	"github.com/inferload/inferload/internal/enginetest"
	"github.com/inferload/inferload/record"
	"github.com/inferload/inferload/sim"
)

// TestReplicasRoundRobin: a target of two simulator replicas (target.url
// and one in target.replicas) gets the single requests in turn and each
// user's conversations on one replica (Responses API conversations,
// whose history a replica holds); the records say which served each,
// summary.json breaks the figures down per replica, and both replicas'
// /metrics are scraped.
func TestReplicasRoundRobin(t *testing.T) {
	t.Parallel()
	var urls [2]string
	for i := range urls {
		_, url := enginetest.StartSim(t, sim.Config{Profile: enginetest.TinyProfile(t), Seed: uint64(i + 1)})
		urls[i] = url
	}
	res := runPlan(t, fmt.Sprintf(`
name: replicas
target: {url: %s, replicas: [%s]}
load: {concurrency: 4, requests: 80}
observe: {interval: 100ms}
workload:
  classes:
    - {name: single, weight: 1, input_tokens: "16", output_tokens: "4"}
    - {name: chat, weight: 1, input_tokens: "16", output_tokens: "4", turns: 3, api: responses}
`, urls[0], urls[1]))
	served := map[int]int{}
	var records []*record.Result
	eachRecord(t, res.Dir, func(r *record.Result) error {
		if !r.OK() {
			return fmt.Errorf("request %d failed: %s", r.ID, r.ErrorMsg)
		}
		served[r.Replica]++
		records = append(records, r)
		return nil
	})
	if len(served) != 2 || served[1] < 20 || served[2] < 20 {
		t.Errorf("requests per replica %v: want both of 1 and 2 to serve a fair share of 80", served)
	}
	// A conversation's later turns went where its first went: they name
	// the previous reply by the id a replica holds its history under
	// (the Responses API), which the other replica refuses, and every
	// request succeeded (above). Later turns there were.
	later := 0
	for _, r := range records {
		if r.Class == "chat" && r.ReuseTokens > 0 {
			later++
		}
	}
	if later < 10 {
		t.Errorf("%d later turns of conversations: too few to show they stayed on their replica", later)
	}
	sum := res.Summary
	if len(sum.Replicas) != 2 || sum.Replicas[0].Replica != 1 || sum.Replicas[1].Replica != 2 ||
		sum.Replicas[0].Requests.Total+sum.Replicas[1].Requests.Total != sum.Requests.Total {
		t.Errorf("summary replicas %+v: want 1 and 2, their requests adding up to %d", sum.Replicas, sum.Requests.Total)
	}
	if sum.Server == nil || len(sum.Server.Sources) != 2 {
		t.Errorf("server telemetry %+v: want both replicas' /metrics", sum.Server)
	}
}
