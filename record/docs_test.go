package record

import (
	"os"
	"strings"
	"testing"
)

// TestSummaryDocumented: every field summary.json can hold, and every error
// kind, is named in docs/summary.md, so the reference cannot drift from
// the code.
func TestSummaryDocumented(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile("../docs/summary.md")
	if err != nil {
		t.Fatal(err)
	}
	text := string(doc)
	recs := append(randomRecords(50, 1), Result{E2EUS: 5, RetryStop: RetryStopBudget},
		Result{E2EUS: 9, Attempts: []Attempt{{Error: ErrHTTP429}}}, *chainRecord(7, []int64{5, 6, 7}, 0),
		Result{ID: 8, Stream: true, TTFTUS: 50, E2EUS: 90, OutputTokens: 2, CachedTokens: 16, ReuseTokens: 32, Server: &ServerTime{QueueUS: 1, HasQueue: true, PrefillUS: 2, DecodeUS: 3}})
	paths := flatten(t, summarize(closedInfo, recs))
	for path := range flatten(t, summarizeSessions(sessionRecords())) {
		if rest, ok := strings.CutPrefix(path, "sessions."); ok {
			_, rest, _ = strings.Cut(rest, ".")
			paths["sessions.<class>."+rest] = nil
		}
	}
	for path := range paths {
		// A class's breakdown repeats the run's own fields, which the doc
		// lists once (and says so under `classes.<name>`).
		if rest, ok := strings.CutPrefix(path, "classes."); ok {
			_, path, _ = strings.Cut(rest, ".")
		}
		if rest, ok := strings.CutPrefix(path, "chains."); ok {
			_, rest, _ = strings.Cut(rest, ".")
			path = "chains.<class>." + rest
		}
		if strings.HasPrefix(path, "errors.") {
			path = "errors.<kind>"
		}
		parent := path[:strings.LastIndex(path, ".")+1] + "*"
		if !strings.Contains(text, "`"+path+"`") && !strings.Contains(text, "`"+parent+"`") {
			t.Errorf("docs/summary.md does not document `%s`", path)
		}
	}
	for _, field := range []string{"classes.<name>", "input_buckets[].label", "chains.<class>.steps[].share_of_e2e", "sessions.<class>.per_turn[].ttft_p90_ms"} {
		if !strings.Contains(text, "`"+field+"`") {
			t.Errorf("docs/summary.md does not document `%s`", field)
		}
	}
	for _, k := range ErrorKinds {
		if !strings.Contains(text, "`"+string(k)+"`") {
			t.Errorf("docs/summary.md does not list error kind `%s`", k)
		}
	}
}
