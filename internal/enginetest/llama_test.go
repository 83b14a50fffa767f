package enginetest

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// TestLlamaServes: the built llama-server loads the model the scripts
// wrote (random weights, Llama 3's tokenizer and chat template) and
// answers a chat request with exactly the tokens asked for, reporting its
// own timings: what the real-engine tests stand on.
func TestLlamaServes(t *testing.T) {
	t.Parallel()
	s := StartLlama(t, Llama{Model: "tiny", Slots: 1})
	body := `{"model":"m","messages":[{"role":"user","content":"Hello there"}],"max_tokens":8,"ignore_eos":true}`
	resp, err := http.Post(s.URL+"/v1/chat/completions", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var reply struct {
		Usage struct {
			Prompt     int `json:"prompt_tokens"`
			Completion int `json:"completion_tokens"`
		} `json:"usage"`
		Timings struct {
			PromptN    int     `json:"prompt_n"`
			PredictedN int     `json:"predicted_n"`
			PromptMS   float64 `json:"prompt_ms"`
		} `json:"timings"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&reply); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d, %v", resp.StatusCode, err)
	}
	// Llama 3's template wraps "Hello there" in a header and an end of
	// turn: 10 tokens or more, exactly 8 generated.
	if reply.Usage.Completion != 8 || reply.Usage.Prompt < 10 || reply.Timings.PredictedN != 8 || !(reply.Timings.PromptMS > 0) {
		t.Errorf("reply %+v: want 8 tokens generated, a templated prompt and the server's timings", reply)
	}
}
