package sim

import (
	"strings"
	"testing"

	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
)

func TestParseTraceParent(t *testing.T) {
	t.Parallel()
	good := "00-" + strings.Repeat("ab", 16) + "-" + strings.Repeat("cd", 8) + "-01"
	for _, tc := range []struct {
		name string // what the row proves
		h    string
		ok   bool
	}{
		{"a version-00 header is continued", good, true},
		{"no header starts a trace of its own", "", false},
		{"another version is not read", "01" + good[2:], false},
		{"an all-zero trace id is invalid", "00-" + strings.Repeat("0", 32) + "-" + strings.Repeat("cd", 8) + "-01", false},
		{"non-hex digits are invalid", "00-" + strings.Repeat("zz", 16) + "-" + strings.Repeat("cd", 8) + "-01", false},
		{"a short header is invalid", good[:54], false},
	} {
		trace, span, ok := parseTraceParent(tc.h)
		if ok != tc.ok || (ok && (len(trace) != 16 || len(span) != 8)) {
			t.Errorf("%s: ok=%v trace=%x span=%x", tc.name, ok, trace, span)
		}
	}
}

func TestSpanExporterEndpoint(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, endpoint, err string // what the row proves
	}{
		{"no host", "http://", "want http://HOST:PORT"},
		{"an unknown scheme", "ftp://127.0.0.1:1", `scheme "ftp"`},
		{"not a URL", "::", "want http://HOST:PORT"},
	} {
		_, err := New(Config{OTLPTracesEndpoint: tc.endpoint})
		if err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("%s: %v, want an error with %q", tc.name, err, tc.err)
		}
	}
}

// TestSpanExporterNeverBlocks: with the queue full (the endpoint is slow
// or down), a finished request's span is dropped and counted, and the
// scheduler goes on at once.
func TestSpanExporterNeverBlocks(t *testing.T) {
	t.Parallel()
	e := &spanExporter{queue: make(chan *tracepb.Span, 1)}
	e.enqueue(&tracepb.Span{})
	e.enqueue(&tracepb.Span{}) // would block a naive send
	if got := e.dropped.Load(); got != 1 {
		t.Errorf("dropped %d, want 1", got)
	}
}
