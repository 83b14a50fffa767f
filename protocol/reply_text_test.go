package protocol

import (
	"strings"
	"testing"
)

// TestReplyText: the fast reader gives ReplyAnswer's text and whether it
// found tool calls, on streamed and whole replies.
func TestReplyText(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		kept  []string
		text  string
		tools bool
	}{
		// A streamed chat reply: deltas joined.
		{"stream", []string{`{"choices":[{"index":0,"delta":{"content":"the knee"}}]}`, `{"choices":[{"index":0,"delta":{"content":" is here"}}]}`}, "the knee is here", false},
		// Escapes decoded: a quote, a newline, a unicode escape, a slash.
		{"escapes", []string{`{"choices":[{"index":0,"delta":{"content":"say \"hi\"\n\u00e9\/"}}]}`}, "say \"hi\"\né/", false},
		// A whole chat reply.
		{"whole", []string{`{"choices":[{"index":0,"message":{"role":"assistant","content":"done"},"finish_reason":"stop"}]}`}, "done", false},
		// A completions reply.
		{"completions", []string{`{"choices":[{"index":0,"text":"four"}]}`}, "four", false},
		// A streamed tool call: the name first, the arguments later; no text.
		{"tool stream", []string{`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c1","type":"function","function":{"name":"search","arguments":""}}]}}]}`,
			`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{}"}}]}}]}`}, "", true},
		// A whole reply calling a tool, content null.
		{"tool whole", []string{`{"choices":[{"index":0,"message":{"content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"search","arguments":"{}"}}]}}]}`}, "", true},
		// A line that does not parse is skipped, as ReplyAnswer skips it.
		{"garbage", []string{`{"choices":[{"index":0,"delta":{"content":"a"}}]}`, `not json`}, "a", false},
	}
	for _, tt := range tests {
		kept := []byte(strings.Join(tt.kept, "\n") + "\n")
		text, tools := ReplyText(kept)
		if text != tt.text || tools != tt.tools {
			t.Errorf("%s: ReplyText %q, tools %v; want %q, %v", tt.name, text, tools, tt.text, tt.tools)
		}
		want, calls := ReplyAnswer(kept)
		if text != want || tools != (len(calls) > 0) {
			t.Errorf("%s: ReplyText (%q, %v) disagrees with ReplyAnswer (%q, %d calls)", tt.name, text, tools, want, len(calls))
		}
	}
}

// BenchmarkReplyText reads a kept 120-token streamed reply, against
// ReplyAnswer on the same bytes.
func BenchmarkReplyText(b *testing.B) {
	var kept []byte
	for range 120 {
		kept = append(kept, `{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":" word"},"logprobs":null,"finish_reason":null}]}`+"\n"...)
	}
	b.Run("ReplyText", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			ReplyText(kept)
		}
	})
	b.Run("ReplyAnswer", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			ReplyAnswer(kept)
		}
	})
}
