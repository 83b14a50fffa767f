package protocol

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
)

// TestKeepText: a request with KeepText keeps the answer text as the
// stream (or whole reply) is parsed, escapes decoded by AnswerText, and
// notes a tool call with its ids, names and arguments (ReplyToolCalls);
// what it keeps agrees with ReplyAnswer reading the kept JSON of the same
// reply; past the cap it keeps whole pieces only.
func TestKeepText(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		chunks []string // streamed; one element and stream false: a whole reply
		stream bool
		limit  int
		text   string
		tools  bool
		cut    bool
		calls  []ReplyToolCall
	}{
		// Deltas joined, escapes decoded: a quote, a newline, é, a slash.
		{"stream", []string{`{"choices":[{"index":0,"delta":{"content":"say \"hi\""}}]}`, `{"choices":[{"index":0,"delta":{"content":"\n\u00e9\/"}}]}`},
			true, 1 << 10, "say \"hi\"\né/", false, false, nil},
		// A whole reply's message.
		{"whole", []string{`{"choices":[{"index":0,"message":{"role":"assistant","content":"done"},"finish_reason":"stop"}]}`},
			false, 1 << 10, "done", false, false, nil},
		// A streamed tool call: no text, the call noted.
		{"tool stream", toolChunks, true, 1 << 10, "", true, false,
			[]ReplyToolCall{{ID: "c1", Name: "get_weather", Arguments: `{"city":"Oslo"}`}, {Name: "get_time", Arguments: "{}"}}},
		// A whole reply calling a tool, content null.
		{"tool whole", []string{`{"choices":[{"index":0,"message":{"content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"search","arguments":"{}"}}]}}]}`},
			false, 1 << 10, "", true, false, []ReplyToolCall{{ID: "c1", Name: "search", Arguments: "{}"}}},
		// KeepText 0 keeps nothing and notes nothing.
		{"off", toolChunks, true, 0, "", false, false, nil},
		// Room for the first piece only (10 raw bytes of "say \"hi\""): cut there.
		{"cut", []string{`{"choices":[{"index":0,"delta":{"content":"say \"hi\""}}]}`, `{"choices":[{"index":0,"delta":{"content":" again"}}]}`},
			true, 12, "say \"hi\"", false, true, nil},
	}
	for _, tt := range tests {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if !tt.stream {
				w.Header().Set("Content-Type", "application/json")
				_, _ = w.Write([]byte(tt.chunks[0]))
				return
			}
			startStream(w, r)
			for _, c := range tt.chunks {
				sendEvent(w, c)
			}
			sendEvent(w, "[DONE]")
		}))
		c := newClient(t, srv.URL, nil)
		req := chatRequest(tt.stream)
		req.KeepText, req.KeepReply = tt.limit, 64<<10
		tr := doTrace(t, c, req)
		srv.Close()
		if tr.Err != "" {
			t.Fatalf("%s: %s %s", tt.name, tr.Err, tr.ErrMsg)
		}
		if got := tr.AnswerText(); got != tt.text || tr.ToolCalls != tt.tools || tr.TextCut != tt.cut {
			t.Errorf("%s: text %q tools %v cut %v; want %q %v %v", tt.name, got, tr.ToolCalls, tr.TextCut, tt.text, tt.tools, tt.cut)
		}
		if got := tr.ReplyToolCalls(); !slices.Equal(got, tt.calls) {
			t.Errorf("%s: tool calls %+v, want %+v", tt.name, got, tt.calls)
		}
		if want, calls := ReplyAnswer(tr.Reply); !tt.cut && tt.limit > 0 && (tr.AnswerText() != want || tr.ToolCalls != (len(calls) > 0)) {
			t.Errorf("%s: kept text %q disagrees with ReplyAnswer %q (%d calls)", tt.name, tr.AnswerText(), want, len(calls))
		}
	}
}

// TestKeepToolCallsCut: tool calls that do not all fit in KeepText are
// marked cut and read as none, never as a call with part of its
// arguments; the objects are kept in order up to the first that did not
// fit, nothing after it.
func TestKeepToolCallsCut(t *testing.T) {
	t.Parallel()
	// toolChunks' objects take 1 (the role, no call), then 140, 101,
	// 100 and 111 bytes with their newlines.
	long := `{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"city\":\"` + strings.Repeat("x", 150) + `"}}]}}]}`
	short := `{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"\"}"}}]}}]}`
	hole := []string{toolChunks[1], long, short}
	tests := []struct {
		name   string
		chunks []string
		limit  int
		cut    bool
		kept   int // objects kept
		calls  []ReplyToolCall
	}{
		// Room for every object: the calls whole, not cut.
		{"fits", toolChunks, 452, false, 4,
			[]ReplyToolCall{{ID: "c1", Name: "get_weather", Arguments: `{"city":"Oslo"}`}, {Name: "get_time", Arguments: "{}"}}},
		// One byte short: the second call's object is cut, so neither
		// call is handed on.
		{"last object cut", toolChunks, 451, true, 3, nil},
		// Room up to the first call's half arguments ({"city":): cut,
		// none handed on rather than get_weather with {"city":.
		{"arguments cut", toolChunks, 300, true, 2, nil},
		// A long piece does not fit, a short one after it would: it is
		// not kept either, which would leave a hole in the arguments.
		{"no hole", hole, 300, true, 1, nil},
	}
	for _, tt := range tests {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			startStream(w, r)
			for _, c := range tt.chunks {
				sendEvent(w, c)
			}
			sendEvent(w, "[DONE]")
		}))
		c := newClient(t, srv.URL, nil)
		req := chatRequest(true)
		req.KeepText = tt.limit
		tr := doTrace(t, c, req)
		srv.Close()
		if tr.Err != "" {
			t.Fatalf("%s: %s %s", tt.name, tr.Err, tr.ErrMsg)
		}
		kept := bytes.Count(tr.ToolCallReply, []byte("\n"))
		if !tr.ToolCalls || tr.ToolCallsCut != tt.cut || kept != tt.kept {
			t.Errorf("%s: tools %v cut %v, %d objects kept; want true %v %d", tt.name, tr.ToolCalls, tr.ToolCallsCut, kept, tt.cut, tt.kept)
		}
		if got := tr.ReplyToolCalls(); !slices.Equal(got, tt.calls) {
			t.Errorf("%s: tool calls %+v, want %+v", tt.name, got, tt.calls)
		}
	}
}

// BenchmarkKeepToolCalls is the per-event path of a reply that calls
// tools under KeepText: the chunk scan and keepText over toolChunks, the
// trace's buffers reused per reply as the engine reuses a Trace's. room
// is KeepText: all of the reply's objects fit, or they are cut. It must
// not allocate.
func BenchmarkKeepToolCalls(b *testing.B) {
	for _, room := range []struct {
		name  string
		limit int
	}{{"fits", 1 << 10}, {"cut", 200}} {
		b.Run(room.name, func(b *testing.B) {
			chunks := make([][]byte, len(toolChunks))
			for k, c := range toolChunks {
				chunks[k] = []byte(c)
			}
			var sh chunkShape
			var c Chunk
			tr := Trace{Text: make([]byte, 0, 1<<10), ToolCallReply: make([]byte, 0, 1<<10)}
			b.ReportAllocs()
			for i := range b.N {
				k := i % len(chunks)
				if k == 0 {
					text, calls := tr.Text[:0], tr.ToolCallReply[:0]
					tr = Trace{Text: text, ToolCallReply: calls}
				}
				data := chunks[k]
				if err := sh.scan(data, &c); err != nil {
					b.Fatal(err)
				}
				tr.keepText(&c, data, room.limit)
			}
		})
	}
}
