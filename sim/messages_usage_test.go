package sim

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
)

// TestMessagesStartReportsCache: a streamed Messages reply's message_start
// usage, written at the first token, reports the prefix-cache hit the
// whole reply to the same prompt reports (the hit is known at admission),
// not 0 because the stream has not ended; the cached part stays out of
// input_tokens. The first request warms the cache with a 64-word prompt.
func TestMessagesStartReportsCache(t *testing.T) {
	t.Parallel()
	_, url, c := newTestServer(t, nil)
	prompt := strings.Repeat("cache me if you can ", 16)
	body := func(stream bool) string {
		b, _ := json.Marshal(map[string]any{"max_tokens": 8, "stream": stream,
			"messages": []map[string]string{{"role": "user", "content": prompt}}})
		return string(b)
	}
	type usage struct {
		InputTokens int `json:"input_tokens"`
		CacheRead   int `json:"cache_read_input_tokens"`
	}
	if r := post(context.Background(), c, url+"/v1/messages", body(false)); r.status != 200 {
		t.Fatalf("warm-up: %d %s", r.status, r.body)
	}
	r := post(context.Background(), c, url+"/v1/messages", body(true))
	if r.status != 200 || len(r.events) == 0 {
		t.Fatalf("stream: %d %s", r.status, r.body)
	}
	var start struct {
		Message struct {
			Usage usage `json:"usage"`
		} `json:"message"`
	}
	if err := json.Unmarshal([]byte(r.events[0]), &start); err != nil {
		t.Fatal(err)
	}
	r = post(context.Background(), c, url+"/v1/messages", body(false))
	var whole struct {
		Usage usage `json:"usage"`
	}
	if err := json.Unmarshal(r.body, &whole); err != nil {
		t.Fatal(err)
	}
	got, want := start.Message.Usage, whole.Usage
	if got != want || want.CacheRead == 0 {
		t.Errorf("message_start usage %+v, want the whole reply's %+v with a cache hit", got, want)
	}
}
