package sim

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

// The rerank, score and pooling routes: each reply in its server's shape,
// the usage the pairs' tokens (the query counted once per document, as a
// cross-encoder reads it), rerank's results by falling score cut to
// top_n, and bad bodies vLLM's 400.
func TestPoolingRoutes(t *testing.T) {
	t.Parallel()
	_, root := startTiny(t, Config{})
	// "which capital" is 2 tokens, each document 3: 3 pairs of 5.
	docs := `["paris is lovely","rome is old","oslo is cold"]`
	// The tiny model reads 2048 tokens: 8 documents of 400 words behind a
	// 2-word query are 3216 tokens together but 402 a pair, which a
	// cross-encoder reads apart; one document of 2100 words is too long.
	long := strings.TrimSuffix(strings.Repeat(`"`+strings.Repeat("word ", 400)+`",`, 8), ",")
	tooLong := `"` + strings.Repeat("word ", 2100) + `"`
	tests := []struct {
		name, path, body string
		status           int
		tokens           int // usage's prompt (or total) tokens; 0: not checked
		results          int // scores or vectors in the reply
	}{
		// Three documents: three results, 3 × (2 + 3) tokens.
		{"rerank", "/v1/rerank", `{"query":"which capital","documents":` + docs + `}`, 200, 15, 3},
		// top_n cuts the results, not the work.
		{"rerank top_n", "/v1/rerank", `{"query":"which capital","documents":` + docs + `,"top_n":2}`, 200, 15, 2},
		// score: text_1 against each text_2.
		{"score", "/v1/score", `{"text_1":"which capital","text_2":` + docs + `}`, 200, 15, 3},
		// pooling: the input's own tokens.
		{"pooling", "/pooling", `{"input":"paris is lovely"}`, 200, 3, 1},
		// Documents whose sum is beyond the context, each pair within it.
		{"rerank long", "/v1/rerank", `{"query":"which capital","documents":[` + long + `]}`, 200, 8 * 402, 8},
		// A pair beyond the context is vLLM's 400.
		{"rerank pair too long", "/v1/rerank", `{"query":"q","documents":["a",` + tooLong + `]}`, 400, 0, 0},
		{"score pair too long", "/v1/score", `{"text_1":"q","text_2":[` + tooLong + `]}`, 400, 0, 0},
		{"pooling too long", "/pooling", `{"input":` + tooLong + `}`, 400, 0, 0},
		// No query.
		{"rerank no query", "/v1/rerank", `{"documents":` + docs + `}`, 400, 0, 0},
		// No documents.
		{"rerank no documents", "/v1/rerank", `{"query":"q","documents":[]}`, 400, 0, 0},
		// An empty document.
		{"rerank empty document", "/v1/rerank", `{"query":"q","documents":["a",""]}`, 400, 0, 0},
		// score without text_1.
		{"score no text_1", "/v1/score", `{"text_2":["a"]}`, 400, 0, 0},
		// Another model is vLLM's 404.
		{"wrong model", "/v1/rerank", `{"model":"other","query":"q","documents":["a"]}`, 404, 0, 0},
		// Not JSON.
		{"json", "/pooling", `{"input":`, 400, 0, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			resp, err := http.Post(root+tc.path, "application/json", strings.NewReader(tc.body))
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != tc.status {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, tc.status, b)
			}
			if tc.status != 200 {
				return
			}
			checkPoolingReply(t, tc.name, b, tc.tokens, tc.results)
		})
	}
}

// checkPoolingReply checks the usage, the count of results and, for
// rerank, that they come by falling score.
func checkPoolingReply(t *testing.T, name string, b []byte, tokens, results int) {
	t.Helper()
	var r struct {
		Usage struct {
			Prompt int `json:"prompt_tokens"`
			Total  int `json:"total_tokens"`
		} `json:"usage"`
		Results []struct {
			Index int     `json:"index"`
			Score float64 `json:"relevance_score"`
		} `json:"results"`
		Data []json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatalf("%v: %s", err, b)
	}
	if r.Usage.Total != tokens || (!strings.HasPrefix(name, "rerank") && r.Usage.Prompt != tokens) {
		t.Errorf("usage %+v, want %d tokens: %s", r.Usage, tokens, b)
	}
	if got := len(r.Results) + len(r.Data); got != results {
		t.Errorf("%d results, want %d: %s", got, results, b)
	}
	for k := 1; k < len(r.Results); k++ {
		if r.Results[k].Score > r.Results[k-1].Score {
			t.Errorf("results not by falling score: %s", b)
		}
	}
}
