package protocol_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"

	"github.com/inferload/inferload/protocol"
)

// A server's native API through the same client: Ollama's /api/chat, whose
// base URL is the server's root. Its final line gives the usage and the
// server's own prefill and decode times.
func ExampleAPI_native() {
	// A stand-in for Ollama: two lines of text, then done: true.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/x-ndjson")
		fmt.Fprintln(w, `{"model":"llama3.2","message":{"role":"assistant","content":"Hello"},"done":false}`)
		fmt.Fprintln(w, `{"model":"llama3.2","message":{"role":"assistant","content":" world"},"done":false}`)
		fmt.Fprintln(w, `{"model":"llama3.2","message":{"role":"assistant","content":""},"done":true,"done_reason":"stop",`+
			`"prompt_eval_count":5,"prompt_eval_duration":12000000,"eval_count":2,"eval_duration":40000000}`)
	}))
	defer srv.Close()

	if err := protocol.CheckAPIURL(protocol.APIOllama, srv.URL+"/v1"); err != nil {
		fmt.Println("refused:", err != nil)
	}
	client, err := protocol.NewOpenAI(protocol.OpenAIOptions{BaseURL: srv.URL})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer client.Close()
	body, err := protocol.OpenAIBody{Model: "llama3.2", Prompt: "Say hello", MaxTokens: 8, Stream: true}.Render(protocol.APIOllama)
	if err != nil {
		fmt.Println(err)
		return
	}
	var t protocol.Trace
	client.Do(context.Background(), &protocol.Request{API: protocol.APIOllama, Body: body, Stream: true, MaxTokens: 8}, &t)
	fmt.Printf("failed: %v, content events: %d, tokens: %d in, %d out, done: %v\n",
		t.Err != "", t.ContentEvents, t.PromptTokens, t.CompletionTokens, t.SawDone)
	fmt.Printf("server: prefill %d µs, decode %d µs\n", t.Timings.PromptUS, t.Timings.PredictedUS)
	// Output:
	// refused: true
	// failed: false, content events: 2, tokens: 5 in, 2 out, done: true
	// server: prefill 12000 µs, decode 40000 µs
}
