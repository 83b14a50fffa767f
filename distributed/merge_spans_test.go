package distributed

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/inferload/inferload/experiment"
	"github.com/inferload/inferload/record"
	"github.com/inferload/inferload/rundir"
)

// TestMergeJoinsEachSegmentsSpans: the spans each segment received are
// carried into the merged directory and join to that segment's records
// there (trace ids derive from each segment's own directory), so the
// merged server_time comes from all of them.
func TestMergeJoinsEachSegmentsSpans(t *testing.T) {
	t.Parallel()
	url := simURL(t)
	yaml := fmt.Sprintf(`name: span-shards
target: {url: %s}
workload: {input_tokens: "16", output_tokens: "4"}
load:
  concurrency: 2
  requests: 20
`, url)
	dirs := runSegments(t, yaml, 2, experiment.Run)
	ok := int64(0)
	for _, dir := range dirs {
		// What a vLLM would have sent the segment's receiver: one span a
		// success, its prefill 1 ms longer than the in-band figure, so
		// the merged summary shows which one it used.
		w, err := rundir.NewJSONLWriter(filepath.Join(dir, rundir.Spans))
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range readAll(t, dir) {
			if !r.OK() || r.Server == nil {
				continue
			}
			ok++
			prefill, decode := r.Server.PrefillUS+1000, r.Server.DecodeUS
			if err := w.Write(record.Span{TraceID: r.TraceID, Name: "llm_request", PrefillUS: &prefill, DecodeUS: &decode}); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
	}
	m, err := Merge(dirs, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	s := m.Summary
	if s.Spans == nil || s.Spans.Received != ok || s.Spans.Joined != ok || s.Spans.Unmatched != 0 {
		t.Errorf("merged spans %+v, want %d received and joined", s.Spans, ok)
	}
	if s.ServerTime == nil || s.ServerTime.FromSpans != ok {
		t.Errorf("merged server_time %+v, want all %d from spans", s.ServerTime, ok)
	}
	checkRebuilds(t, m.Dir)
}
