package engine

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/inferload/inferload/protocol"
	"github.com/inferload/inferload/record"
	"github.com/inferload/inferload/workload"
)

// replyServer answers the k-th chat request (from 1) with the streamed
// reply "R<k> says hello" and usage of 3 completion tokens, or with a
// reply padded past record.MaxReplyKept when cut, or HTTP 500 for the
// requests fail names; it keeps every body.
type replyServer struct {
	cut  bool
	fail map[int]bool

	mu     sync.Mutex
	bodies []string
}

func (s *replyServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	s.mu.Lock()
	s.bodies = append(s.bodies, string(b))
	k := len(s.bodies)
	s.mu.Unlock()
	if s.fail[k] {
		http.Error(w, "no", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	chunk := func(text string) {
		fmt.Fprintf(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":%q}}]}\n\n", text)
	}
	chunk(fmt.Sprintf("R%d", k))
	if s.cut {
		chunk(strings.Repeat("x", record.MaxReplyKept))
	}
	chunk(" says")
	chunk(" hello")
	fmt.Fprint(w, "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":1,\"completion_tokens\":3}}\n\n")
	fmt.Fprint(w, "data: [DONE]\n\n")
}

// runConversation runs one closed-loop user through one 3-turn
// conversation of a chat class against srv and returns its records.
func runConversation(t *testing.T, srv *replyServer, synthetic bool) []*record.Result {
	t.Helper()
	hs := httptest.NewServer(srv)
	defer hs.Close()
	client, err := protocol.NewOpenAI(protocol.OpenAIOptions{BaseURL: hs.URL + "/v1"})
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	mix, err := workload.NewMix(workload.MixConfig{Seed: 3, Classes: []workload.ClassConfig{
		{Name: "chat", Weight: 1, Input: workload.Fixed(8), Output: workload.Fixed(3), Turns: 3, SyntheticHistory: synthetic}}})
	if err != nil {
		t.Fatal(err)
	}
	render := func(s workload.Spec) (*protocol.Request, error) {
		var ms []protocol.ChatMessage
		for _, m := range s.Messages {
			ms = append(ms, protocol.ChatMessage{Role: m.Role, Content: m.Content})
		}
		body, err := protocol.OpenAIBody{Messages: ms, MaxTokens: s.MaxTokens, Stream: true, IncludeUsage: true}.Render(protocol.APIChat)
		return &protocol.Request{API: protocol.APIChat, Body: body, Stream: true, MaxTokens: s.MaxTokens, EventsCap: 8}, err
	}
	rs := collect(t, Config{Client: client, Source: mix, Render: render, Shape: ClosedLoop{Users: 1}, Requests: 3}, context.Background())
	if len(rs) != 3 {
		t.Fatalf("%d records, want 3", len(rs))
	}
	return rs
}

// A conversation's later turns carry the server's real replies in their
// history by default, and count them as reusable; a synthetic history,
// a failed turn and a reply cut at the keep limit carry synthetic text.
func TestConversationThreadsRealReplies(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		srv       *replyServer
		synthetic bool
		threaded  [3]bool // whether turn k's body carries turn k-1's reply
		cut       [3]bool // the records marked ReplyCut
	}{
		// The default: each later turn carries its predecessor's reply.
		{"replies", &replyServer{}, false, [3]bool{false, true, true}, [3]bool{}},
		// history: synthetic sends what it always sent.
		{"synthetic", &replyServer{}, true, [3]bool{}, [3]bool{}},
		// A failed first turn leaves its synthetic text (today's
		// behaviour); the second turn's reply is threaded again.
		{"failed turn", &replyServer{fail: map[int]bool{1: true}}, false, [3]bool{false, false, true}, [3]bool{}},
		// A reply longer than the client keeps is not threaded in part,
		// and is counted; the last turn has no next turn to carry it.
		{"cut", &replyServer{cut: true}, false, [3]bool{}, [3]bool{true, true, false}},
	}
	for _, tc := range tests {
		rs := runConversation(t, tc.srv, tc.synthetic)
		for k := range 3 {
			if k > 0 {
				reply := fmt.Sprintf("R%d says hello", k)
				if got := strings.Contains(tc.srv.bodies[k], reply); got != tc.threaded[k] {
					t.Errorf("%s: turn %d carries %q: %v, want %v", tc.name, k+1, reply, got, tc.threaded[k])
				}
			}
			if rs[k].ReplyCut != tc.cut[k] {
				t.Errorf("%s: turn %d reply_cut %v, want %v", tc.name, rs[k].Turn, rs[k].ReplyCut, tc.cut[k])
			}
		}
		// A threaded reply is reusable: the server wrote it into its
		// cache (3 tokens by its usage); a synthetic one is not.
		for k := 1; k < 3; k++ {
			want := rs[k-1].PromptTokensSent
			if tc.threaded[k] {
				want += 3
			}
			if rs[k].ReuseTokens != want {
				t.Errorf("%s: turn %d reuse_tokens %d, want %d", tc.name, k+1, rs[k].ReuseTokens, want)
			}
		}
	}
}
