package record

import (
	"encoding/json"
	"testing"
)

// chainRecord is a measured chain request of class rag whose steps took
// the given durations; failAt (1-based, 0: none) is the step that failed.
func chainRecord(id uint64, durs []int64, failAt int) *Result {
	r := &Result{ID: id, Class: "rag", Stream: true, OutputTokens: 2, EventsUS: []int64{1, 2}}
	names := []string{"embed", "retrieve", "chat"}
	kinds := []string{"embeddings", "http", "chat"}
	at := int64(0)
	for k, d := range durs {
		s := ChainStep{Name: names[k], Kind: kinds[k], SendUS: at, DurUS: d}
		if k == 2 {
			s.TTFTUS = d / 2
		}
		if k+1 == failAt {
			s.Error = ErrHTTP5xx
			r.Error = ErrHTTP5xx
		}
		r.Chain = append(r.Chain, s)
		at += d
	}
	r.E2EUS = at
	return r
}

// TestChainSummary: per-step counts, failures by step, latencies of the
// successful chains only, and each step's share of the end-to-end time.
func TestChainSummary(t *testing.T) {
	t.Parallel()
	a := NewAggregate()
	a.Add(chainRecord(1, []int64{1000, 2000, 7000}, 0))
	a.Add(chainRecord(2, []int64{1000, 2000, 7000}, 0))
	a.Add(chainRecord(3, []int64{1000, 500}, 2))         // retrieval failed
	a.Add(&Result{ID: 4, Class: "chat", E2EUS: 5000})    // not a chain
	warm := chainRecord(5, []int64{1000, 2000, 7000}, 0) // warm-up: not counted
	warm.Warmup = true
	a.Add(warm)
	s := a.Summary(RunInfo{EndUS: 20000})
	if len(s.Chains) != 1 {
		t.Fatalf("chains %v", s.Chains)
	}
	c := s.Chains["rag"]
	tests := []struct {
		name      string
		got, want any
	}{
		// Three measured chains, one failed.
		{"chains", [2]int64{c.Chains, c.Failed}, [2]int64{3, 1}},
		// The end-to-end latency covers the two successes only.
		{"e2e", [2]float64{float64(c.E2E.Count), c.E2E.P50}, [2]float64{2, 10}},
		// Every chain started the first two steps; only successes reached chat.
		{"started", [3]int64{c.Steps[0].Started, c.Steps[1].Started, c.Steps[2].Started}, [3]int64{3, 3, 2}},
		// The failure is charged to the step that failed, by kind.
		{"failed", [3]int64{c.Steps[0].Failed, c.Steps[1].Failed, c.Steps[1].Errors["http_5xx"]}, [3]int64{0, 1, 1}},
		// Step latencies come from successful chains (the failed chain's
		// 1 ms embeddings is not among them).
		{"latency counts", [3]int64{c.Steps[0].Latency.Count, c.Steps[1].Latency.Count, c.Steps[2].Latency.Count}, [3]int64{2, 2, 2}},
		// Chat's share of the end-to-end time is 7 of 10 ms.
		{"share", c.Steps[2].ShareOfE2E, 0.7},
		// Only the streamed chat step has a TTFT.
		{"ttft", [2]int64{c.Steps[0].TTFT.Count, c.Steps[2].TTFT.Count}, [2]int64{0, 2}},
		// Names and kinds come from the records.
		{"names", c.Steps[1].Name + "/" + c.Steps[1].Kind, "retrieve/http"},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("%s: got %v, want %v", tt.name, tt.got, tt.want)
		}
	}
	// A run without chains has no chains key at all.
	b := NewAggregate()
	b.Add(&Result{ID: 1, E2EUS: 5})
	raw, err := json.Marshal(b.Summary(RunInfo{EndUS: 10}))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	if _, ok := m["chains"]; ok {
		t.Error("a run without chains has a chains key")
	}
}
