package experiment

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/inferload/inferload/analyze"
	"github.com/inferload/inferload/plan"
	"github.com/inferload/inferload/record"
	"github.com/inferload/inferload/rundir"
	"github.com/inferload/inferload/schedule"
	"github.com/inferload/inferload/sim"
	"github.com/inferload/inferload/summary"
)

// TestSaltKeepsRunsApart runs one plan twice against one simulator, whose
// prefix cache keeps what the first run computed: with the default salt
// the second run finds none of its prompts cached, while the server
// counts every prompt at exactly the length of the first run's; with the
// salt off, or fixed, it sends the first run's prompts again, the cache
// serves them, and compare warns that the cache flatters the second run.
func TestSaltKeepsRunsApart(t *testing.T) {
	t.Parallel()
	tests := []struct {
		salt       string
		sameSalt   bool // both runs record one salt in plan.yaml
		secondHits bool // the second run finds its prompts cached
	}{
		// The default: a new salt per run, a cold cache for each.
		{"", false, false},
		// Off: an exact replay, served from the cache the first run left.
		{"off", true, true},
		// A fixed salt (a recorded run's): a replay too.
		{"3f9a0c1e77b2", true, true},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("salt=%q", tt.salt), func(t *testing.T) {
			t.Parallel()
			url := tinySim(t, sim.Faults{})
			salt := ""
			if tt.salt != "" {
				salt = ", salt: " + tt.salt
			}
			yaml := fmt.Sprintf("name: salted\ntarget: {url: %s}\nworkload: {input_tokens: \"64\", output_tokens: \"4\"%s}\nload: {concurrency: 1, requests: 12}\n", url, salt)
			p := testPlan(t, yaml)
			first, err := Run(context.Background(), p, Options{})
			if err != nil {
				t.Fatal(err)
			}
			second, err := Run(context.Background(), p, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if first.Summary.PrefixCache != nil {
				t.Fatalf("the first run found its own prompts cached: %+v", first.Summary.PrefixCache)
			}
			if hits := second.Summary.PrefixCache != nil; hits != tt.secondHits {
				t.Errorf("second run cache hits: %+v, want hits %v", second.Summary.PrefixCache, tt.secondHits)
			}
			a, b := recordedSalt(t, first.Dir), recordedSalt(t, second.Dir)
			if (a == b) != tt.sameSalt || a == plan.SaltRun {
				t.Errorf("plan.yaml salts %q and %q: want the same %v, and never the unresolved %q", a, b, tt.sameSalt, plan.SaltRun)
			}
			if p.Workload.Salt != cmpOr(tt.salt, plan.SaltRun) {
				t.Errorf("the caller's plan was changed to salt %q", p.Workload.Salt)
			}
			sameServerLengths(t, first.Dir, second.Dir)
			// compare sees what the cache did, from the records alone.
			base, err := summary.LoadRunSamples(first.Dir)
			if err != nil {
				t.Fatal(err)
			}
			cur, err := summary.LoadRunSamples(second.Dir)
			if err != nil {
				t.Fatal(err)
			}
			c := analyze.Compare(base, cur, analyze.CompareOptions{NoRunsCheck: true})
			t.Logf("second run: cache %+v; compare warnings %q", cur.Overall.Cache, c.Warnings)
			if warned := len(c.Warnings) > 0; warned != tt.secondHits {
				t.Errorf("compare warnings %q, want a cached-tokens warning %v", c.Warnings, tt.secondHits)
			}
		})
	}
}

// TestSaltKeepsSharedPrefixesShared: a shared prefix the plan declares is
// still shared within a run (every request after the first hits it), but
// with the default salt the second run's first request misses the prefix
// the first run left cached; with the salt off it hits it.
func TestSaltKeepsSharedPrefixesShared(t *testing.T) {
	t.Parallel()
	tests := []struct {
		salt       string
		secondHits int64 // of the second run's 12 requests
	}{
		// Each run warms its own prefix: 11 hits after the first request.
		{"run", 11},
		// Off: the first run's prefix serves all 12.
		{"off", 12},
	}
	for _, tt := range tests {
		t.Run(tt.salt, func(t *testing.T) {
			t.Parallel()
			url := tinySim(t, sim.Faults{})
			p := testPlan(t, fmt.Sprintf("name: prefixed\ntarget: {url: %s}\nworkload: {input_tokens: \"32\", output_tokens: \"4\", salt: %s, shared_prefix: {tokens: 64}}\nload: {concurrency: 1, requests: 12}\n", url, tt.salt))
			var hits [2]int64
			for k := range hits {
				out, err := Run(context.Background(), p, Options{})
				if err != nil {
					t.Fatal(err)
				}
				if pc := out.Summary.PrefixCache; pc != nil {
					hits[k] = pc.Hits
				}
			}
			if hits[0] != 11 || hits[1] != tt.secondHits {
				t.Errorf("prefix-cache hits %d then %d of 12: want 11 then %d", hits[0], hits[1], tt.secondHits)
			}
		})
	}
}

// TestSegmentsShareTheSalt: the segments of a distributed run started
// together derive one salt from their common start; a segment with no
// common start refuses, since it could not share one.
func TestSegmentsShareTheSalt(t *testing.T) {
	t.Parallel()
	p := testPlan(t, "name: shards\ntarget: {url: http://127.0.0.1:1}\nload: {concurrency: 2, requests: 2, segment: 0/2}\n")
	seg, err := schedule.ParseSegment(p.Load.Segment)
	if err != nil {
		t.Fatal(err)
	}
	opts := Options{TraceRun: "shards@2026-12-01T20:00:00Z"}
	a, errA := withRunSalt(p, seg, opts)
	b, errB := withRunSalt(p, seg, opts)
	if errA != nil || errB != nil || a.Workload.Salt != b.Workload.Salt || a.Workload.Salt == plan.SaltRun {
		t.Errorf("segments of one run got salts %q and %q (%v, %v)", a.Workload.Salt, b.Workload.Salt, errA, errB)
	}
	if _, err := withRunSalt(p, seg, Options{}); err == nil || !strings.Contains(err.Error(), "--start-at") {
		t.Errorf("a segment without a common start: err = %v, want a refusal naming --start-at", err)
	}
}

// recordedSalt is the salt a run directory's plan.yaml records.
func recordedSalt(t *testing.T, dir string) string {
	t.Helper()
	p, err := summary.ReadPlan(dir)
	if err != nil {
		t.Fatal(err)
	}
	return p.Workload.Salt
}

// sameServerLengths fails unless the server counted each request of run a
// at the prompt length of the same request of run b, and the client's
// length agreed.
func sameServerLengths(t *testing.T, a, b string) {
	t.Helper()
	lengths := func(dir string) map[uint64][2]int {
		out := map[uint64][2]int{}
		if _, err := rundir.ReadRecords(rundir.RecordsFile(dir), func(r *record.Result) error {
			out[r.ID] = [2]int{r.InputTokens, r.PromptTokensSent} // the server's usage count, the client's
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		return out
	}
	la, lb := lengths(a), lengths(b)
	if len(la) == 0 || len(la) != len(lb) {
		t.Fatalf("%d and %d records", len(la), len(lb))
	}
	for id, n := range la {
		if n[0] == 0 || n != lb[id] || n[0] != n[1] {
			t.Errorf("request %d: server and client lengths %v in one run, %v in the other", id, n, lb[id])
		}
	}
}

func cmpOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
