package protocol_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"time"

	"github.com/inferload/inferload/protocol"
)

// A streaming chat request against an OpenAI-compatible server: every
// content event is timestamped, usage comes from the server.
func ExampleNewOpenAI() {
	// A stand-in for vLLM: three tokens, a usage chunk, [DONE].
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		for _, tok := range []string{"Hello", ",", " world"} {
			fmt.Fprintf(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":%q}}]}\n\n", tok)
			w.(http.Flusher).Flush()
		}
		fmt.Fprint(w, "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":5,\"completion_tokens\":3}}\n\ndata: [DONE]\n\n")
	}))
	defer srv.Close()

	client, err := protocol.NewOpenAI(protocol.OpenAIOptions{
		BaseURL:      srv.URL + "/v1",
		TTFTTimeout:  5 * time.Second,
		TotalTimeout: 30 * time.Second,
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer client.Close()

	// Render the body once, before the request is due.
	body, err := protocol.OpenAIBody{Model: "qwen2.5-7b", Prompt: "Say hello", MaxTokens: 3,
		Stream: true, IncludeUsage: true}.Render(protocol.APIChat)
	if err != nil {
		fmt.Println(err)
		return
	}
	req := &protocol.Request{API: protocol.APIChat, Body: body, Stream: true, MaxTokens: 3, EventsCap: 3}

	var t protocol.Trace
	client.Do(context.Background(), req, &t)
	fmt.Printf("failed: %v, content events: %d, completion tokens: %d, [DONE]: %v\n",
		t.Err != "", t.ContentEvents, t.CompletionTokens, t.SawDone)
	fmt.Println("TTFT measured:", t.FirstToken.Sub(t.Sent) > 0, "offsets:", len(t.EventsUS))
	// Output:
	// failed: false, content events: 3, completion tokens: 3, [DONE]: true
	// TTFT measured: true offsets: 3
}

// Reading Server-Sent Events: multi-line data is joined, comments are
// skipped, and a last event without its blank line still arrives.
func ExampleSSEReader() {
	stream := ": keep-alive\n\n" +
		"data: {\"a\":\n" +
		"data: 1}\n\n" +
		"event: error\n" +
		"data: overloaded\n\n" +
		"data: [DONE]"
	r := protocol.NewSSEReader(strings.NewReader(stream), time.Now)
	for {
		ev, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("type=%q data=%q\n", ev.Type, ev.Data)
	}
	// Output:
	// type="" data="{\"a\":\n1}"
	// type="error" data="overloaded"
	// type="" data="[DONE]"
}
