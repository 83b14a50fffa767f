package protocol

import (
	"bufio"
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// shapeOutcome is what one scan gave: the chunk and the error's text.
type shapeOutcome struct {
	Chunk Chunk
	Err   string
}

func scanOutcome(data []byte, scan func([]byte, *Chunk) error) shapeOutcome {
	var o shapeOutcome
	if err := scan(data, &o.Chunk); err != nil {
		o.Err = err.Error()
	}
	return o
}

// checkShape scans chunks in order through one chunkShape and fails where
// any reads differently from ScanChunk; it returns how many took the
// shortcut.
func checkShape(t *testing.T, chunks []string) (hits int) {
	t.Helper()
	var sh chunkShape
	for i, c := range chunks {
		data := []byte(c)
		if sh.ok && sh.matches(data) {
			hits++
		}
		want := scanOutcome(data, ScanChunk)
		got := scanOutcome(data, sh.scan)
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("chunk %d %s: differs from ScanChunk (-ScanChunk +shape):\n%s", i, c, diff)
		}
	}
	return hits
}

func TestChunkShapeReadsAsScanChunk(t *testing.T) {
	t.Parallel()
	const pre, post = `{"id":"c1","choices":[{"index":0,"delta":{"content":"`, `"},"finish_reason":null}]}`
	tok := func(s string) string { return pre + s + post }
	tests := []struct {
		name     string
		chunks   []string
		wantHits int
	}{
		{"steady tokens", []string{tok("a"), tok(" the"), tok(`\"q\"`), tok(`\u00e9`)}, 3},
		// The first content chunk after a role-only one is learned, not
		// taken: a role chunk carries no output.
		{"role chunk first", []string{pre[:len(pre)-len(`"content":"`)] + `"role":"assistant","content":""}}]}`, tok("a"), tok("b")}, 1},
		{"finish reason ends it", []string{tok("a"), `{"id":"c1","choices":[{"index":0,"delta":{"content":"b"},"finish_reason":"stop"}]}`, tok("c")}, 0},
		{"usage after", []string{tok("a"), `{"id":"c1","choices":[],"usage":{"prompt_tokens":3,"completion_tokens":2}}`, tok("b")}, 0},
		{"empty string is not taken", []string{tok("a"), tok(""), tok("b"), tok("c")}, 1},
		// A backslash at the string's end escapes the quote the suffix
		// starts with: not this shape.
		{"trailing backslash", []string{tok("a"), pre + `b\` + post}, 0},
		{"quote inside", []string{tok("a"), pre + `b"` + post}, 0},
		{"bad escape", []string{tok("a"), tok(`\x`)}, 0},
		{"two outputs are not learned", []string{
			`{"choices":[{"delta":{"content":"a","reasoning":"b"}}]}`, `{"choices":[{"delta":{"content":"c","reasoning":"b"}}]}`}, 0},
		{"duplicate key empties it", []string{
			`{"choices":[{"delta":{"content":"a","content":""}}]}`, `{"choices":[{"delta":{"content":"b","content":""}}]}`}, 0},
		{"reasoning", []string{`{"choices":[{"delta":{"reasoning_content":"a"}}]}`, `{"choices":[{"delta":{"reasoning_content":"bb"}}]}`}, 1},
		{"completions text", []string{`{"choices":[{"text":"a","index":0}]}`, `{"choices":[{"text":"b","index":0}]}`}, 1},
		{"tool calls are not a string", []string{
			`{"choices":[{"delta":{"tool_calls":[{"id":"x"}]}}]}`, `{"choices":[{"delta":{"tool_calls":[{"id":"y"}]}}]}`}, 0},
		{"error after", []string{tok("a"), `{"error":{"message":"boom"}}`}, 0},
		{"malformed after", []string{tok("a"), tok("b") + "}"}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if hits := checkShape(t, tt.chunks); hits != tt.wantHits {
				t.Errorf("%d chunks took the shortcut, want %d", hits, tt.wantHits)
			}
		})
	}
}

// TestChunkShapeOnCaptures: real servers' streams read the same through
// the shortcut, and all but a stream's first and last few chunks take it.
func TestChunkShapeOnCaptures(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"llamacpp-chat-stream.txt", "llm-d-sim-chat-stream.txt"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			raw, err := os.ReadFile("testdata/streams/" + name) // copies of ../shared/fixtures
			if err != nil {
				t.Fatal(err)
			}
			var chunks []string
			sc := bufio.NewScanner(bytes.NewReader(raw))
			sc.Buffer(nil, 1<<20)
			for sc.Scan() {
				if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok && d != "[DONE]" {
					chunks = append(chunks, d)
				}
			}
			if len(chunks) < 8 {
				t.Fatalf("%d chunks in the capture", len(chunks))
			}
			if hits := checkShape(t, chunks); hits < len(chunks)-4 {
				t.Errorf("%d of %d chunks took the shortcut, want all but the first and last few", hits, len(chunks))
			}
		})
	}
}

// FuzzChunkShape: whatever chunk was learned, the next reads as ScanChunk
// reads it. With splice set, the next chunk is the learned one with mid in
// place of its string, the case the shortcut takes.
func FuzzChunkShape(f *testing.F) {
	f.Add([]byte(`{"choices":[{"delta":{"content":"a"}}]}`), []byte(`{"choices":[{"delta":{"content":"bc"}}]}`), false)
	f.Add([]byte(`{"choices":[{"delta":{"content":"a"}}]}`), []byte(`b\`), true)
	f.Add([]byte(`{"choices":[{"text":"a"}],"x":1}`), []byte(`\u12`), true)
	f.Add([]byte(`{"choices":[{"text":"a"}],"x":1}`), []byte(`"},{"text":"`), true)
	f.Fuzz(func(t *testing.T, first, next []byte, splice bool) {
		var sh chunkShape
		_ = sh.scan(first, new(Chunk))
		if splice && sh.ok {
			next = append(append(bytes.Clone(sh.prefix), next...), sh.suffix...)
		}
		want := scanOutcome(next, ScanChunk)
		got := scanOutcome(next, sh.scan)
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("after %q, %q differs from ScanChunk (-ScanChunk +shape):\n%s", first, next, diff)
		}
	})
}
