package experiment

import (
	"context"
	"fmt"
	"testing"

	"github.com/inferload/inferload/record"
	"github.com/inferload/inferload/sim"
)

// A replayed trace is the schedule and the lengths: request i is due at
// its recorded offset divided by the speed, with the recorded prompt and
// output lengths, and the run ends with the trace.
func TestRunReplaysTrace(t *testing.T) {
	t.Parallel()
	path := writeTrace(t)
	url := tinySim(t, sim.Faults{})
	p := testPlan(t, fmt.Sprintf(`
target: {url: %s}
load: {trace: {path: %s, speed: 2}}
`, url, path))
	res, err := Run(context.Background(), p, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if s := res.Summary; s.Requests.Succeeded != 8 || s.Mode != record.ModeOpen {
		t.Fatalf("requests %+v mode %s errors %v: want the 8 traced requests in an open loop", s.Requests, s.Mode, s.Errors)
	}
	n := 0
	eachRecord(t, res.Dir, func(r *record.Result) error {
		n++
		i := int64(r.ID)
		// recorded 100 ms apart, replayed at speed 2: 50 ms apart
		if r.IntendedUS != i*50_000 || r.PromptTokensSent != 20+int(i) || r.MaxTokens != 4+int(i) || r.OutputTokens != 4+int(i) {
			t.Errorf("request %d: intended %dµs prompt %d max %d out %d; want %dµs %d %d %d",
				i, r.IntendedUS, r.PromptTokensSent, r.MaxTokens, r.OutputTokens, i*50_000, 20+i, 4+i, 4+i)
		}
		return nil
	})
	if n != 8 {
		t.Errorf("%d records, want 8", n)
	}
}
