package experiment

import (
	"fmt"
	"testing"

	"github.com/inferload/inferload/record"
	"github.com/inferload/inferload/sim"
)

// TestRealRepliesServedFromCache: a run of 3-turn conversations whose
// history carries the simulator's real replies (history: replies, the
// default). Each later turn asks to reuse the previous prompt and its
// reply (reuse_tokens), and the simulator caches both as it writes them,
// so by construction it serves exactly that less the reply's last token
// (never computed), rounded down to its 16-token blocks.
func TestRealRepliesServedFromCache(t *testing.T) {
	t.Parallel()
	url := tinySim(t, sim.Faults{})
	res := runPlan(t, fmt.Sprintf(`
name: reply-reuse
target: {url: %s}
load: {concurrency: 4, requests: 30}
workload:
  classes:
    - {name: chat, weight: 1, input_tokens: "32", output_tokens: "40", turns: 3}
`, url))
	later := 0
	eachRecord(t, res.Dir, func(r *record.Result) error {
		if r.Turn < 2 || r.Error != record.ErrNone {
			return nil
		}
		later++
		if want := (r.ReuseTokens - 1) / 16 * 16; r.CachedTokens != want || r.ReuseTokens <= 32 {
			t.Errorf("record %d (turn %d): %d cached tokens of %d asked to reuse, want %d", r.ID, r.Turn, r.CachedTokens, r.ReuseTokens, want)
		}
		return nil
	})
	if later < 10 {
		t.Errorf("%d later turns, want at least 10", later)
	}
}
