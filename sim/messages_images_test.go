package sim

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// messagesWithImage is a Messages body whose one user message holds text
// and the block given.
func messagesWithImage(text, block string) string {
	return fmt.Sprintf(`{"max_tokens":1,"messages":[{"role":"user","content":[{"type":"text","text":%q},%s]}]}`, text, block)
}

// base64Block is an image block of a data URI's media type and data.
func base64Block(t *testing.T, uri string) string {
	t.Helper()
	meta, data, _ := strings.Cut(strings.TrimPrefix(uri, "data:"), ",")
	return fmt.Sprintf(`{"type":"image","source":{"type":"base64","media_type":%q,"data":%q}}`, strings.TrimSuffix(meta, ";base64"), data)
}

// TestMessagesImages: /v1/messages takes Anthropic's image blocks and
// charges each the tokens the chat route charges the same image as an
// image_url part (64×64 is 255 tokens, 1080p 2125, an unfetched URL
// 765: TestImageTokens); OpenAI's image_url part, or a source Anthropic
// would not take, is a 400 in Anthropic's error shape naming the fault.
func TestMessagesImages(t *testing.T) {
	t.Parallel()
	_, url, c := newTestServer(t, func(c *Config) {
		c.Profile.MaxModelLen = 8192
		c.Profile.MaxNumBatchedTokens = 8192
	})
	const text = "describe this picture in one word"
	small, large := dataURI(t, 64, 64, "png"), dataURI(t, 1920, 1080, "jpeg")
	tests := []struct {
		name   string
		block  string
		status int
		chat   string // the same image as chat's image_url, whose prompt tokens it must equal
		want   string // for a 400, what its message names
	}{
		// A base64 source: its size read from its header.
		{"png 64x64", base64Block(t, small), 200, small, ""},
		{"jpeg 1080p", base64Block(t, large), 200, large, ""},
		// A url source: never fetched, taken as 1024x1024.
		{"url", `{"type":"image","source":{"type":"url","url":"https://example.com/cat.jpg"}}`, 200, "https://example.com/cat.jpg", ""},
		// OpenAI's shape is not Anthropic's.
		{"image_url", fmt.Sprintf(`{"type":"image_url","image_url":{"url":%q}}`, small), 400, "", "image_url"},
		// A source type Anthropic does not have.
		{"file source", `{"type":"image","source":{"type":"file","file_id":"f"}}`, 400, "", "source.type"},
		// A media type that is no image.
		{"text media", `{"type":"image","source":{"type":"base64","media_type":"text/plain","data":"aGk="}}`, 400, "", "media_type"},
		// Data that is no image.
		{"broken data", `{"type":"image","source":{"type":"base64","media_type":"image/png","data":"iVBORw0KGgo="}}`, 400, "", "source.data"},
		// A url no server fetches.
		{"ftp url", `{"type":"image","source":{"type":"url","url":"ftp://example.com/a.png"}}`, 400, "", "source.url"},
	}
	for _, tt := range tests {
		r := post(context.Background(), c, url+"/v1/messages", messagesWithImage(text, tt.block))
		if r.err != nil || r.status != tt.status {
			t.Errorf("%s: status %d err %v (%.200s), want %d", tt.name, r.status, r.err, r.body, tt.status)
			continue
		}
		if tt.status != 200 {
			if !strings.Contains(string(r.body), `"invalid_request_error"`) || !strings.Contains(string(r.body), tt.want) {
				t.Errorf("%s: error %s, want Anthropic's invalid_request_error naming %s", tt.name, r.body, tt.want)
			}
			continue
		}
		var rep messagesToolReply
		if err := json.Unmarshal(r.body, &rep); err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		got := rep.Usage.InputTokens + rep.Usage.CacheRead // the prompt, cached part or not
		want := chatPromptTokens(t, c, url, chatWithImage(text, tt.chat))
		if got != want {
			t.Errorf("%s: %d prompt tokens, want %d as the chat route charges the same image", tt.name, got, want)
		}
	}
}

// chatPromptTokens is the prompt tokens the chat route reports for body.
func chatPromptTokens(t *testing.T, c *http.Client, url, body string) int {
	t.Helper()
	r := post(context.Background(), c, url+"/v1/chat/completions", body)
	var v struct {
		Usage struct {
			PromptTokens int `json:"prompt_tokens"`
		} `json:"usage"`
	}
	if r.err != nil || r.status != 200 || json.Unmarshal(r.body, &v) != nil {
		t.Fatalf("chat: status %d err %v: %s", r.status, r.err, r.body)
	}
	return v.Usage.PromptTokens
}
