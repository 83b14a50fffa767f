package capacity_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/inferload/inferload/capacity"
	"github.com/inferload/inferload/record"
	"github.com/inferload/inferload/sim"
)

// conversations is a plan whose closed-loop users hold 6-turn
// conversations of 512-token messages: turn 6's prompt carries ~3k
// tokens of history, all of it the previous turn's prompt and reply.
const conversations = `
workload:
  seed: 5
  classes:
    - {name: agent, weight: 1, input_tokens: "512", output_tokens: "64", turns: 6}
load:
  concurrency: 200
  think_time: 1s
`

// noSharedPrefix is a plan of single requests whose prompts share
// nothing: no router can win a cache hit.
const noSharedPrefix = `
workload:
  seed: 5
  classes:
    - {name: chat, weight: 4, input_tokens: "256", output_tokens: "128"}
    - {name: doc, weight: 1, input_tokens: "2048", output_tokens: "128"}
load:
  concurrency: 150
  think_time: 2s
`

// routerOptions plans a100-7b replicas for the plan's workload and load
// (YAML) under one SLO, over 3 simulated minutes: long enough that the
// binomial rule's noise stays under a replica.
func routerOptions(t *testing.T, yaml, slo string) capacity.FleetOptions {
	t.Helper()
	prof, err := sim.LookupProfile(sim.DefaultProfile)
	if err != nil {
		t.Fatal(err)
	}
	b, err := record.ParseSLO(slo)
	if err != nil {
		t.Fatal(err)
	}
	return capacity.FleetOptions{Workload: fleetWorkload(t, yaml), Profile: prof, Router: capacity.RoundRobin,
		SLOs: []record.SLO{b}, Warmup: 10 * time.Second, Duration: 3 * time.Minute, MaxReplicas: 24}
}

// TestCompareRouters: on virtual time with the seed fixed, each router's
// answer is exact. Conversations: a turn's history (the previous prompt
// and its reply) is cached where the previous turn ran, so the routers
// that keep a conversation on one replica (session, prefix) need fewer
// replicas than round-robin and hit the cache more. Without shared prefixes no router has anything to
// win, so all answers are within one replica and nothing hits.
func TestCompareRouters(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, plan, slo string
		// want is the replicas per router in Routers() order:
		// round-robin, least-outstanding, prefix, session.
		want []int
	}{
		// Each turn's history is the previous prompt and its real reply:
		// the routers that follow it hit the cache on ~73% of prompt
		// tokens, the others on 7–12%. Least-outstanding stacks long
		// prefills (TestLeastOutstandingStacksPrefills) on a TTFT tail
		// that more replicas barely lower.
		{"conversations", conversations, "ttft.p99<=2s", []int{12, 23, 8, 6}},
		// Nothing to follow: the prefix router is least-outstanding.
		{"no shared prefix", noSharedPrefix, "ttft.p99<=1s", []int{8, 8, 8, 8}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := capacity.PlanFleetRouters(routerOptions(t, tt.plan, tt.slo), nil)
			if err != nil {
				t.Fatal(err)
			}
			rows := map[capacity.Router]record.FleetRouter{}
			var replicas []int
			for _, r := range got.Routers {
				t.Logf("%s: %d replicas, %s %.0f ms, prefix hits %.3f", r.Router, r.Replicas, r.Figure, r.FigureMS, r.PrefixHitShare)
				rows[capacity.Router(r.Router)] = r
				replicas = append(replicas, r.Replicas)
			}
			if !slices.Equal(replicas, tt.want) {
				t.Errorf("replicas per router %v, want %v", replicas, tt.want)
			}
			if got.Replicas != rows[capacity.RoundRobin].Replicas {
				t.Errorf("the answer (round-robin) is %d replicas, its row says %d", got.Replicas, rows[capacity.RoundRobin].Replicas)
			}
			rr := rows[capacity.RoundRobin]
			switch tt.plan {
			case conversations:
				for _, k := range []capacity.Router{capacity.PrefixAware, capacity.Sticky} {
					if r := rows[k]; r.Replicas > rr.Replicas || r.PrefixHitShare < 2*rr.PrefixHitShare {
						t.Errorf("%s: %d replicas, hit share %.3f; round-robin %d, %.3f: want no more replicas and twice the hits",
							k, r.Replicas, r.PrefixHitShare, rr.Replicas, rr.PrefixHitShare)
					}
				}
			case noSharedPrefix:
				if slices.Max(replicas)-slices.Min(replicas) > 1 {
					t.Errorf("replicas per router %v: want within one of each other", replicas)
				}
				for _, r := range got.Routers {
					if r.PrefixHitShare != 0 {
						t.Errorf("%s: prefix hit share %.3f with nothing shared", r.Router, r.PrefixHitShare)
					}
				}
			}
		})
	}
}

// TestFleetConversationsChainTheirTurns: a closed-loop user's turn k+1
// opens with every full block of turn k's prompt (its history), carries
// the user as its affinity, and grows; a workload without conversations
// has no user streams.
func TestFleetConversationsChainTheirTurns(t *testing.T) {
	t.Parallel()
	if capacity.UserRequests(fleetWorkload(t, noSharedPrefix), 16) != nil {
		t.Error("a workload without turns: want no user streams")
	}
	next := capacity.UserRequests(fleetWorkload(t, conversations), 16)
	if next == nil {
		t.Fatal("a workload with turns: no user streams")
	}
	for u := range 3 {
		for k := range 11 { // two conversations: turn 6 starts the next
			prev, cur := next(u, k), next(u, k+1)
			if cur.Affinity != uint64(u)+1 {
				t.Errorf("user %d request %d: affinity %d, want %d", u, k+1, cur.Affinity, u+1)
			}
			chained := len(cur.BlockHashes) > len(prev.BlockHashes) &&
				slices.Equal(cur.BlockHashes[:len(prev.BlockHashes)], prev.BlockHashes)
			if newConv := (k+1)%6 == 0; chained == newConv {
				t.Errorf("user %d request %d: chained on the previous turn %v, want %v (%d and %d blocks)",
					u, k+1, chained, !newConv, len(prev.BlockHashes), len(cur.BlockHashes))
			}
		}
	}
	if a, b := next(0, 0), next(1, 0); slices.Equal(a.BlockHashes[:1], b.BlockHashes[:1]) {
		t.Error("users 0 and 1 open their conversations with the same block")
	}
}

// TestFleetConversationsThreadReplies: with the workload's default
// (history: replies) a turn's history holds the previous turn's prompt
// and its reply, as a real run's does, and the previous turn's hashes
// cover both, so the replica that wrote the reply serves it from cache:
// by construction turn k+1's prompt is turn k's prompt + 64 reply tokens
// + 512 new ones, and turn k's hashes are the full 16-token blocks of its
// prompt + reply, which turn k+1 opens with. With history: synthetic the
// reply in the history is text the server never wrote: the previous
// turn's hashes stop at its prompt.
func TestFleetConversationsThreadReplies(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		history string
		replies bool // the previous turn's hashes cover its reply
	}{
		// The default: the reply is the server's and reusable.
		{"replies", "", true},
		// The old behaviour, kept on request.
		{"synthetic", ", history: synthetic", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			plan := strings.Replace(conversations, `turns: 6}`, `turns: 6`+tt.history+`}`, 1)
			next := capacity.UserRequests(fleetWorkload(t, plan), 16)
			for k := range 5 { // turns 1..5 each have a next turn
				prev, cur := next(0, k), next(0, k+1)
				if want := prev.PromptTokens + 64 + 512; cur.PromptTokens != want {
					t.Errorf("turn %d: %d prompt tokens, want %d", k+2, cur.PromptTokens, want)
				}
				covered := prev.PromptTokens
				if tt.replies {
					covered += prev.OutputTokens
				}
				if len(prev.BlockHashes) != covered/16 {
					t.Errorf("turn %d: %d block hashes, want %d (%d tokens)", k+1, len(prev.BlockHashes), covered/16, covered)
				}
				if !slices.Equal(cur.BlockHashes[:len(prev.BlockHashes)], prev.BlockHashes) {
					t.Errorf("turn %d does not open with turn %d's blocks", k+2, k+1)
				}
			}
		})
	}
}
