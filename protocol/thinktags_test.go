package protocol

import (
	"strings"
	"testing"
)

// classify reads events (raw JSON string contents) through one thinkTags
// and returns each event's channel, R or A, with U after an event that
// closed an unopened block.
func classify(events []string) string {
	var tt thinkTags
	var b strings.Builder
	for _, e := range events {
		r := tt.read([]byte(e))
		if r.isReasoning() {
			b.WriteByte('R')
		} else {
			b.WriteByte('A')
		}
		if r.unopened {
			b.WriteByte('U')
		}
	}
	return b.String()
}

func TestThinkTags(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		events []string
		want   string
	}{
		// No tags: all answer.
		{"plain", []string{"Hello", " world"}, "AA"},
		// A block then the answer; the tags are reasoning.
		{"block", []string{"<think>", "hmm", "</think>", "Yes"}, "RRRA"},
		// Text after the close tag in the same event makes it an answer event.
		{"close and answer together", []string{"<think>a", "b</think>\n\nYes"}, "RA"},
		// Text before the open tag in the same event is answer: the event is the answer's.
		{"answer then open", []string{"Hi<think>", "x", "</think>"}, "ARR"},
		// A tag split over events: the event holding only "<thi" is pending, so reasoning.
		{"split open", []string{"<thi", "nk>", "x", "</th", "ink>", "y"}, "RRRRRA"},
		// Escaped as Go servers write: \u003c and \u003e, and \/ for the slash.
		{"escaped", []string{`\u003cthink\u003e`, "x", `\u003c\/think>`, "y"}, "RRRA"},
		// Not a tag: "<b>" and "<thin>" outside a block are answer text.
		{"not tags", []string{"<b>", "<thin>", "a < b"}, "AAA"},
		// A would-be tag that fails in the next event: that event is the answer's.
		{"failed pending", []string{"<th", "e end"}, "RA"},
		// Inside a block "<think>" again is text (reasoning), and "<" starts afresh after a mismatch.
		{"nested open is text", []string{"<think>", "<think>", "<</think>", "z"}, "RRRA"},
		// A close tag no open tag preceded: the output began inside a block (U).
		{"unopened close", []string{"I", " think", "</think>", "42"}, "AARUA"},
		// After a block, a stray close tag is answer text, not a second reopening.
		{"stray close after block", []string{"<think>x</think>", "a</think>"}, "RA"},
		// A control escape (\n) between tag bytes breaks the tag.
		{"escape breaks tag", []string{`<thi\nnk>`}, "A"},
		// Non-ASCII \u escapes and truncated escapes read as text.
		{"odd escapes", []string{`<think>\u00e9\u12`, `</think>\`}, "RA"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := classify(tt.events); got != tt.want {
				t.Errorf("%q: %s, want %s", tt.events, got, tt.want)
			}
		})
	}
}

// TestThinkTagsAllocs: the matcher allocates nothing per event.
func TestThinkTagsAllocs(t *testing.T) {
	var tt thinkTags
	text := []byte(`<think>a\u003c/think\u003eb`)
	if n := testing.AllocsPerRun(100, func() { tt.reset(); _ = tt.read(text) }); n != 0 {
		t.Errorf("%v allocations per event", n)
	}
}

// FuzzThinkTags: any text, cut anywhere into two events, never panics and
// leaves the matcher in the state one event would: where the stream is
// (inside a block or not) does not depend on how the server chunked it.
func FuzzThinkTags(f *testing.F) {
	f.Add([]byte("<think>x</think>y"), 3)
	f.Add([]byte(`\u003cthink\u003e\n</think>`), 9)
	f.Add([]byte("a</think>b<think>c"), 0)
	f.Add([]byte(`<\/think>\`), 2)
	f.Fuzz(func(t *testing.T, text []byte, cut int) {
		var whole, split thinkTags
		_ = whole.read(text)
		cut = cutAt(text, cut)
		if cut > 0 {
			_ = split.read(text[:cut])
		}
		if cut < len(text) {
			_ = split.read(text[cut:])
		}
		if whole != split {
			t.Errorf("%q cut at %d: state %+v, whole %+v", text, cut, split, whole)
		}
	})
}

// cutAt maps cut into [0, len(text)] at a character boundary of JSON
// string contents: never inside an escape, as a server's chunks never are.
func cutAt(text []byte, cut int) int {
	if len(text) == 0 {
		return 0
	}
	cut = ((cut % (len(text) + 1)) + len(text) + 1) % (len(text) + 1)
	for i := 0; i < len(text); {
		_, w := jsonByte(text[i:])
		if i+w > cut {
			return i
		}
		i += w
	}
	return cut
}

// BenchmarkThinkTags is the per-event cost think tags add to a stream's
// answer text when on (target.think_tags): one typical token.
func BenchmarkThinkTags(b *testing.B) {
	text := []byte(" the")
	var tt thinkTags
	b.ReportAllocs()
	for b.Loop() {
		_ = tt.read(text)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
}
