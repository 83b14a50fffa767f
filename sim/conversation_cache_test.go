package sim

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// chatTurn is what a conversation's client reads of one turn's reply.
type chatTurn struct {
	content                  string
	prompt, completion, hits int
}

// sendTurn posts one chat turn of exactly out tokens and reads its reply.
func sendTurn(t *testing.T, c *http.Client, url string, msgs []map[string]string, out int) chatTurn {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"messages": msgs, "max_tokens": out, "ignore_eos": true})
	r := post(context.Background(), c, url+"/v1/chat/completions", string(body))
	if r.err != nil || r.status != 200 {
		t.Fatalf("turn: status %d, %v: %s", r.status, r.err, r.body)
	}
	var v struct {
		Choices []struct {
			Message struct{ Content string } `json:"message"`
		} `json:"choices"`
		Usage struct {
			Prompt     int `json:"prompt_tokens"`
			Completion int `json:"completion_tokens"`
			Details    struct {
				Cached int `json:"cached_tokens"`
			} `json:"prompt_tokens_details"`
		} `json:"usage"`
	}
	if err := json.Unmarshal(r.body, &v); err != nil || len(v.Choices) != 1 {
		t.Fatalf("reply %s: %v", r.body, err)
	}
	return chatTurn{v.Choices[0].Message.Content, v.Usage.Prompt, v.Usage.Completion, v.Usage.Details.Cached}
}

// TestConversationCachesReplies sends a 3-turn conversation whose
// history carries the server's real replies. The truth by construction:
// the previous turn left its prompt and its reply in the KV cache, all
// but the reply's last token computed (nothing sampled after it), so a
// turn's cached_tokens is (previous prompt + previous reply − 1) rounded
// down to whole blocks of 16. A history with other text in the reply's
// place (history: synthetic) reuses the previous prompt's blocks only.
func TestConversationCachesReplies(t *testing.T) {
	t.Parallel()
	const block = 16
	user := []string{words("first", 37), words("second", 11), words("third", 5)}
	outs := []int{45, 70, 9}
	tests := []struct {
		name      string
		synthetic bool // the history holds other text in the reply's place
		disable   bool
		// cached is what turn k+1 should report, from turn k's prompt
		// and completion tokens.
		cached func(prompt, reply int) int
	}{
		// The default: prompt and reply blocks both serve the next turn.
		{"real replies", false, false, func(p, r int) int { return (p + r - 1) / block * block }},
		// The reply text differs, so only the prompt's blocks match.
		{"synthetic replies", true, false, func(p, _ int) int { return p / block * block }},
		// --no-enable-prefix-caching: nothing is served.
		{"caching disabled", false, true, func(int, int) int { return 0 }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, url, hc := newTestServer(t, func(c *Config) { c.Profile.DisablePrefixCaching = tt.disable })
			var msgs []map[string]string
			var prev chatTurn
			for k := range user {
				msgs = append(msgs, map[string]string{"role": "user", "content": user[k]})
				got := sendTurn(t, hc, url, msgs, outs[k])
				if got.completion != outs[k] {
					t.Fatalf("turn %d: %d completion tokens, want %d", k, got.completion, outs[k])
				}
				if k > 0 {
					// The reply read back is as many tokens as were generated.
					if want := prev.prompt + prev.completion + len(strings.Fields(user[k])); got.prompt != want {
						t.Errorf("turn %d: %d prompt tokens, want %d", k, got.prompt, want)
					}
					if want := tt.cached(prev.prompt, prev.completion); got.hits != want {
						t.Errorf("turn %d: cached_tokens %d, want %d", k, got.hits, want)
					}
				}
				reply := got.content
				if tt.synthetic {
					reply = words("synthetic", outs[k])
				}
				msgs = append(msgs, map[string]string{"role": "assistant", "content": reply})
				prev = got
			}
		})
	}
}
