package distributed

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/inferload/inferload/experiment"
	"github.com/inferload/inferload/summary"
)

// TestMergeConversationsAcrossSegments: a conversation lives in one
// segment (its user is one segment's) and its number is run-wide, so no
// two segments' conversations share a session id, in either stage of a
// staged run; the merged run counts every segment's conversations once,
// as the collector's page and summary.json join them by that id.
func TestMergeConversationsAcrossSegments(t *testing.T) {
	t.Parallel()
	url := simURL(t)
	yaml := fmt.Sprintf(`name: chat-shards
target: {url: %s}
workload:
  classes:
    - {name: chat, weight: 1, input_tokens: "16", output_tokens: "4", turns: 3}
load:
  concurrency: 4
  stages: [600ms@4, 600ms@4]
`, url)
	dirs := runSegments(t, yaml, 2, experiment.Run)
	owner := map[uint64]int{} // session id → the segment that sent it
	var perSegment int64
	for seg, dir := range dirs {
		for _, r := range readAll(t, dir) {
			if r.Turn == 0 {
				continue
			}
			if o, ok := owner[r.Session]; ok && o != seg {
				t.Fatalf("session %d has turns from segments %d and %d", r.Session, o, seg)
			}
			owner[r.Session] = seg
		}
		own, err := summary.Rebuild(dir) // the segment's own summary, as it wrote it
		if err != nil {
			t.Fatalf("segment %d: %v", seg, err)
		}
		if c := own.Summary.Sessions["chat"]; c != nil {
			perSegment += c.Completed + c.Failed + c.Incomplete
		}
	}
	if len(owner) == 0 {
		t.Fatal("no conversation ran")
	}
	m, err := Merge(dirs, filepath.Join(t.TempDir(), "merged"))
	if err != nil {
		t.Fatal(err)
	}
	c := m.Summary.Sessions["chat"]
	if c == nil || c.Completed+c.Failed+c.Incomplete != perSegment {
		t.Errorf("merged sessions %+v: want the segments' %d conversations", c, perSegment)
	}
}
