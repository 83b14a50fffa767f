package record

import (
	"encoding/hex"
	"regexp"
	"testing"
)

func TestTraceParentIsW3CAndDeterministic(t *testing.T) {
	tid := TraceID("run-a", 7)
	if tid != TraceID("run-a", 7) {
		t.Fatal("trace id not deterministic")
	}
	if tid == TraceID("run-a", 8) || tid == TraceID("run-b", 7) {
		t.Fatal("trace ids of different requests collide")
	}
	re := regexp.MustCompile(`^00-[0-9a-f]{32}-[0-9a-f]{16}-01$`)
	p0, p1 := TraceParent(tid, 0), TraceParent(tid, 1)
	if !re.MatchString(p0) || !re.MatchString(p1) {
		t.Fatalf("not a W3C traceparent: %q %q", p0, p1)
	}
	if p0[3:35] != hex.EncodeToString(tid[:]) {
		t.Fatalf("trace id not in traceparent: %q", p0)
	}
	if p0[36:52] == p1[36:52] {
		t.Fatal("two attempts share a span id")
	}
}
