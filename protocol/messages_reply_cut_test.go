package protocol

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

// TestMessagesKeepTextCut: a Messages reply longer than KeepText is cut
// as a chat reply is (whole pieces only, TextCut set), so a conversation
// turn on --api messages marks its record reply_cut and threads no part
// of the reply.
func TestMessagesKeepTextCut(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, contentType, reply string
		stream                   bool
		limit                    int
		text                     string
		cut                      bool
	}{
		// Room for both deltas: the whole answer, not cut.
		{"stream fits", "text/event-stream", anthropicTextStream, true, 64, "Hello there", false},
		// Room for "Hello" (5 bytes) only: the first delta kept, cut.
		{"stream cut", "text/event-stream", anthropicTextStream, true, 8, "Hello", true},
		// A whole reply's text is one piece: it fits or nothing is kept.
		{"whole cut", "application/json", `{"type":"message","content":[{"type":"text","text":"Hello there"}],"stop_reason":"end_turn","usage":{"input_tokens":1,"output_tokens":2}}`,
			false, 8, "", true},
	}
	for _, tt := range tests {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", tt.contentType)
			_, _ = w.Write([]byte(tt.reply))
		}))
		req := apiRequest(APIMessages, tt.stream)
		req.KeepText = tt.limit
		tr := doTrace(t, newClient(t, srv.URL+"/v1", nil), req)
		srv.Close()
		if tr.Err != "" {
			t.Fatalf("%s: %s %s", tt.name, tr.Err, tr.ErrMsg)
		}
		if got := tr.AnswerText(); got != tt.text || tr.TextCut != tt.cut {
			t.Errorf("%s: text %q cut %v, want %q %v", tt.name, got, tr.TextCut, tt.text, tt.cut)
		}
	}
}
