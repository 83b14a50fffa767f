package capacity

import (
	"fmt"
	"slices"
	"testing"
)

// conversationTurns is users' conversations as the prefix router sees
// them: every conversation opens with one shared system-prompt block,
// then its own blocks; turn t (from 1) is a prompt of 6t − 1 blocks
// whose first 6(t − 1) are the previous turn's prompt and its one-block
// reply, and its hashes run on over its own reply, as a fleet renders
// a conversation whose history carries the real replies. rounds[t][u]
// is user u's turn t+1.
func conversationTurns(users, turns int) [][]FleetRequest {
	const system = 0xfeed
	rounds := make([][]FleetRequest, turns)
	for t := range turns {
		for u := range users {
			prompt := 6*(t+1) - 1
			hashes := make([]uint64, prompt+1)
			hashes[0] = system
			for i := 1; i < len(hashes); i++ {
				hashes[i] = mix64(uint64(u)<<32|uint64(i)) | 1
			}
			rounds[t] = append(rounds[t], FleetRequest{PromptTokens: 16 * prompt, OutputTokens: 16, BlockHashes: hashes, Affinity: uint64(u) + 1})
		}
	}
	return rounds
}

// documentRequests are n requests whose 160-token prompts open with one
// shared 128-token document and end with a question of their own.
func documentRequests(n int) []FleetRequest {
	var out []FleetRequest
	for q := range n {
		hashes := []uint64{11, 13, 15, 17, 19, 21, 23, 25, mix64(uint64(q)) | 1, mix64(uint64(q)+99) | 1}
		out = append(out, FleetRequest{PromptTokens: 160, OutputTokens: 8, BlockHashes: hashes})
	}
	return out
}

// routeRounds routes each round's requests in order over replicas 0..n-1
// and returns the replica each got. A request stays in flight until its
// round ends, when all of them finish; busy preloads in-flight counts
// that never finish.
func routeRounds(rt router, n int, busy []int, rounds [][]FleetRequest) [][]int {
	up := make([]int, n)
	for k := range up {
		up[k] = k
	}
	var picks [][]int
	for _, round := range rounds {
		inflight := slices.Clone(busy)
		var got []int
		for _, req := range round {
			k := rt.pick(up, inflight, req)
			inflight[k]++
			got = append(got, k)
		}
		picks = append(picks, got)
	}
	return picks
}

// perReplica counts the picks each of n replicas got.
func perReplica(picks []int, n int) []int {
	c := make([]int, n)
	for _, k := range picks {
		c[k]++
	}
	return c
}

// TestPrefixRouterLongestPrefix: the prefix router follows the longest
// prefix of a prompt it has routed, when that is at least half the prompt
// and within the load bound; a short shared opening does not pull
// requests together. Each row's truth is by construction.
func TestPrefixRouterLongestPrefix(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		busy   []int // in flight on each of the 4 replicas before and throughout
		rounds [][]FleetRequest
		check  func(picks [][]int) error
	}{
		// 8 conversations sharing only a system-prompt block: the first
		// turns spread 2 per replica (no match reaches half a prompt), and
		// every later turn follows its own history (6 of 11 blocks and
		// more), so each conversation stays on one replica.
		{"conversations sharing a system prompt", []int{0, 0, 0, 0}, conversationTurns(8, 4), func(picks [][]int) error {
			if c := perReplica(picks[0], 4); slices.Max(c) != 2 {
				return fmt.Errorf("first turns per replica %v: want 2 each", c)
			}
			for u := range picks[0] {
				for t := range picks {
					if picks[t][u] != picks[0][u] {
						return fmt.Errorf("user %d: turn %d on replica %d, its first turn on %d", u, t+1, picks[t][u], picks[0][u])
					}
				}
			}
			return nil
		}},
		// 8 questions on one 128-token document (8 of 10 blocks), each
		// done before the next: all go where the first went.
		{"a shared document", []int{0, 0, 0, 0}, oneEach(documentRequests(8)), func(picks [][]int) error {
			for t := range picks {
				if picks[t][0] != picks[0][0] {
					return fmt.Errorf("question %d on replica %d, the first on %d: want all there", t+1, picks[t][0], picks[0][0])
				}
			}
			return nil
		}},
		// The first question, then 7 more in flight at once: a question
		// follows the document while that replica would hold at most
		// 1.25× the mean in flight + 1, else it spills to the least
		// loaded (bounded loads), which caches the document too and is
		// followed from then on. No replica ends past the bound, and the
		// 7 do not all pile onto one.
		{"past the load bound", []int{0, 0, 0, 0}, [][]FleetRequest{documentRequests(1), documentRequests(8)[1:]}, func(picks [][]int) error {
			c := perReplica(picks[1], 4)
			if bound := prefixLoadBound*7/4 + 1; float64(slices.Max(c)) > bound || slices.Max(c) == 7 {
				return fmt.Errorf("7 questions in flight per replica %v: want none above %.2f, and not all on one", c, bound)
			}
			return nil
		}},
		// Requests sharing nothing fill the replicas evenly.
		{"nothing shared", []int{0, 0, 0, 0}, [][]FleetRequest{documentRequestsUnshared(8)}, func(picks [][]int) error {
			if c := perReplica(picks[0], 4); slices.Max(c) != 2 {
				return fmt.Errorf("requests per replica %v: want 2 each", c)
			}
			return nil
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			rt, err := newRouter(PrefixAware, 16)
			if err != nil {
				t.Fatal(err)
			}
			if err := tt.check(routeRounds(rt, 4, tt.busy, tt.rounds)); err != nil {
				t.Error(err)
			}
		})
	}
}

// documentRequestsUnshared are n requests of 10 blocks sharing none.
func documentRequestsUnshared(n int) []FleetRequest {
	var out []FleetRequest
	for q := range n {
		hashes := make([]uint64, 10)
		for i := range hashes {
			hashes[i] = mix64(uint64(q)<<8|uint64(i)) | 1
		}
		out = append(out, FleetRequest{PromptTokens: 160, OutputTokens: 8, BlockHashes: hashes})
	}
	return out
}

// oneEach puts each request in a round of its own: each finishes before
// the next is sent.
func oneEach(reqs []FleetRequest) [][]FleetRequest {
	rounds := make([][]FleetRequest, len(reqs))
	for i, r := range reqs {
		rounds[i] = []FleetRequest{r}
	}
	return rounds
}
