package sim

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

func TestEmbeddings(t *testing.T) {
	_, url, client := newTestServer(t, nil)
	tests := []struct {
		name    string
		body    string
		status  int
		vectors int
		tokens  int
	}{
		// One string: one vector, and usage counts its words and the full stop.
		{"one input", `{"input":"the quick brown fox."}`, 200, 1, 5},
		// A list: one vector per entry, usage sums them.
		{"list", `{"input":["a b","c d e"]}`, 200, 2, 5},
		// The profile's model name is accepted.
		{"model", `{"model":"tiny-sim","input":"x"}`, 200, 1, 1},
		// An empty input is a 400, as vLLM answers.
		{"empty", `{"input":""}`, 400, 0, 0},
		// An empty list is a 400.
		{"empty list", `{"input":[]}`, 400, 0, 0},
		// A number is not an input.
		{"wrong type", `{"input":3}`, 400, 0, 0},
		// Broken JSON is a 400, never a panic.
		{"bad json", `{"input":`, 400, 0, 0},
		// Another model is a 404 like a real server's.
		{"unknown model", `{"model":"gpt-x","input":"a"}`, 404, 0, 0},
		// Input beyond the context window is rejected.
		{"too long", `{"input":"` + strings.Repeat("w ", 5000) + `"}`, 400, 0, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			resp, err := client.Post(url+"/v1/embeddings", "application/json", strings.NewReader(tc.body))
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != tc.status {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, tc.status, b)
			}
			if tc.status != http.StatusOK {
				return
			}
			checkEmbeddingsReply(t, b, tc.vectors, tc.tokens)
		})
	}
}

// checkEmbeddingsReply decodes an OpenAI embeddings reply and checks its
// shape and usage.
func checkEmbeddingsReply(t *testing.T, b []byte, vectors, tokens int) {
	t.Helper()
	var r struct {
		Data []struct {
			Index     int       `json:"index"`
			Embedding []float64 `json:"embedding"`
		} `json:"data"`
		Usage struct {
			PromptTokens int `json:"prompt_tokens"`
		} `json:"usage"`
	}
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatalf("reply %s: %v", b, err)
	}
	if len(r.Data) != vectors || r.Usage.PromptTokens != tokens {
		t.Fatalf("%d vectors, %d prompt tokens; want %d, %d: %s", len(r.Data), r.Usage.PromptTokens, vectors, tokens, b)
	}
	for k, d := range r.Data {
		if d.Index != k || len(d.Embedding) != embeddingDims {
			t.Errorf("vector %d: index %d, %d dims", k, d.Index, len(d.Embedding))
		}
		for _, x := range d.Embedding {
			if x < -1 || x >= 1 {
				t.Errorf("vector %d: %v outside [-1, 1)", k, x)
			}
		}
	}
}
