package protocol

import (
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/inferload/inferload/sim"
)

// toolChunks is a streamed tool call as vLLM sends it: the name first,
// the arguments in pieces, then a second call.
var toolChunks = []string{
	`{"choices":[{"index":0,"delta":{"role":"assistant","content":""}}]}`,
	`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c1","type":"function","function":{"name":"get_weather","arguments":""}}]}}]}`,
	`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"city\":"}}]}}]}`,
	`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"\"Oslo\"}"}}]}}]}`,
	`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"function":{"name":"get_time","arguments":"{}"}}]}}]}`,
	`{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`,
}

func TestReplyAnswer(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name      string
		kept      string
		wantText  string
		wantCalls []ReplyToolCall
	}{
		// streamed text joins every delta, escapes decoded
		{"stream text", `{"choices":[{"index":0,"delta":{"content":"The \"answer\""}}]}` + "\n" +
			`{"choices":[{"index":0,"delta":{"content":" is B"}}]}`, `The "answer" is B`, nil},
		// a second choice is not the answer
		{"other choice", `{"choices":[{"index":1,"delta":{"content":"no"}},{"index":0,"delta":{"content":"yes"}}]}`, "yes", nil},
		// completions text
		{"completions", `{"choices":[{"index":0,"text":"42"}]}`, "42", nil},
		// a whole reply's message, calls without index keep their order
		{"whole reply", `{"choices":[{"index":0,"message":{"content":null,"tool_calls":[{"function":{"name":"f","arguments":"{}"}}]}}]}`,
			"", []ReplyToolCall{{Name: "f", Arguments: "{}"}}},
		// streamed tool calls are joined per index, the id from the
		// delta that carried it (the second call has none)
		{"stream tools", strings.Join(toolChunks, "\n"), "",
			[]ReplyToolCall{{ID: "c1", Name: "get_weather", Arguments: `{"city":"Oslo"}`}, {Name: "get_time", Arguments: "{}"}}},
		// an object that does not parse is skipped
		{"garbage", "{not json\n" + `{"choices":[{"delta":{"content":"ok"}}]}`, "ok", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			text, calls := ReplyAnswer([]byte(tc.kept))
			if text != tc.wantText || !slices.Equal(calls, tc.wantCalls) {
				t.Errorf("got %q %+v, want %q %+v", text, calls, tc.wantText, tc.wantCalls)
			}
		})
	}
}

// TestKeepReply: a graded request keeps its content chunks (up to the
// cap, cut at a chunk's edge) and sends its expected answer; an ungraded
// one keeps nothing and sends no header.
func TestKeepReply(t *testing.T) {
	t.Parallel()
	headers := make(chan string, 3) // the handler's view, handed over safely
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		headers <- r.Header.Get(ExpectAnswerHeader)
		startStream(w, r)
		for _, c := range toolChunks {
			sendEvent(w, c)
		}
		sendEvent(w, "[DONE]")
	}))
	t.Cleanup(srv.Close)
	c := newClient(t, srv.URL, nil)
	for _, tc := range []struct {
		name      string
		keep      int
		expect    string
		wantCalls int
		wantCut   bool
	}{
		{"ungraded", 0, "", 0, false},
		{"graded", 64 << 10, "get_weather", 2, false},
		// room for the first two content chunks only: the name, no arguments
		{"cut", len(toolChunks[1]) + len(toolChunks[2]) + 2, "x", 1, true},
	} {
		req := chatRequest(true)
		req.KeepReply, req.ExpectAnswer = tc.keep, tc.expect
		tr := doTrace(t, c, req)
		if tr.Err != "" {
			t.Fatalf("%s: %s %s", tc.name, tr.Err, tr.ErrMsg)
		}
		_, calls := ReplyAnswer(tr.Reply)
		if len(calls) != tc.wantCalls || tr.ReplyCut != tc.wantCut || tc.keep == 0 && tr.Reply != nil {
			t.Errorf("%s: %d calls, cut %v, kept %d bytes; want %d calls, cut %v", tc.name, len(calls), tr.ReplyCut, len(tr.Reply), tc.wantCalls, tc.wantCut)
		}
		if h := <-headers; h != tc.expect {
			t.Errorf("%s: header %q, want %q", tc.name, h, tc.expect)
		}
	}
}

// TestExpectAnswerHeaderMatchesSim: the header the client sends is the
// one the simulator reads (two packages that must not import each other
// outside tests).
func TestExpectAnswerHeaderMatchesSim(t *testing.T) {
	if ExpectAnswerHeader != sim.ExpectAnswerHeader {
		t.Errorf("protocol sends %q, the simulator reads %q", ExpectAnswerHeader, sim.ExpectAnswerHeader)
	}
}
