package protocol

import (
	"strings"
	"testing"
)

// TestRenderMessagesImages: a Messages body carries images as Anthropic's
// image blocks, never OpenAI's image_url parts: a data URI as a base64
// source with its media type, an http(s) URL as a url source, after the
// message's text; a URL Anthropic cannot take is an error, not a
// request sent without its image.
func TestRenderMessagesImages(t *testing.T) {
	t.Parallel()
	png := Image{URL: "data:image/png;base64,iVBORw0K", Detail: "low"}
	web := Image{URL: "https://example.com/a.jpg"}
	tests := []struct {
		name    string
		body    OpenAIBody
		want    string // the whole body, or the error's text
		wantErr bool
	}{
		// A prompt's images follow its text; detail has no counterpart.
		{"prompt", OpenAIBody{Model: "m", Prompt: "what <is> this", Images: []Image{png, web}, MaxTokens: 8},
			`{"max_tokens":8,"messages":[{"role":"user","content":[{"type":"text","text":"what <is> this"},` +
				`{"type":"image","source":{"type":"base64","media_type":"image/png","data":"iVBORw0K"}},` +
				`{"type":"image","source":{"type":"url","url":"https://example.com/a.jpg"}}]}],"model":"m","stream":false}`, false},
		// An image alone is one block, no empty text block before it.
		{"image only", OpenAIBody{Images: []Image{{URL: "data:image/jpeg;base64,/9j/"}}, MaxTokens: 8},
			`{"max_tokens":8,"messages":[{"role":"user","content":[{"type":"image","source":{"type":"base64","media_type":"image/jpeg","data":"/9j/"}}]}],"stream":false}`, false},
		// A conversation: only the message with images takes blocks; the
		// system prompt still goes to system, the reply stays a string.
		{"conversation", OpenAIBody{Messages: []ChatMessage{{Role: "system", Content: "s"}, {Role: "user", Content: "a", Images: []Image{web}},
			{Role: "assistant", Content: "b"}, {Role: "user", Content: "c"}}, MaxTokens: 8},
			`{"max_tokens":8,"messages":[{"role":"user","content":[{"type":"text","text":"a"},{"type":"image","source":{"type":"url","url":"https://example.com/a.jpg"}}]},` +
				`{"role":"assistant","content":"b"},{"role":"user","content":"c"}],"stream":false,"system":"s"}`, false},
		// A data URI that is not base64 has no base64 source.
		{"not base64", OpenAIBody{Prompt: "p", Images: []Image{{URL: "data:image/png,raw"}}, MaxTokens: 8},
			"base64 data URI", true},
		// Nor does one that is not an image.
		{"not an image", OpenAIBody{Prompt: "p", Images: []Image{{URL: "data:text/plain;base64,aGk="}}, MaxTokens: 8},
			"base64 data URI", true},
		// A file path is neither source.
		{"path", OpenAIBody{Prompt: "p", Images: []Image{{URL: "/tmp/a.png"}}, MaxTokens: 8},
			"http(s) URL", true},
	}
	for _, tt := range tests {
		got, err := tt.body.Render(APIMessages)
		switch {
		case tt.wantErr && (err == nil || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("%s: err = %v, want one saying %q", tt.name, err, tt.want)
		case !tt.wantErr && err != nil:
			t.Errorf("%s: %v", tt.name, err)
		case !tt.wantErr && string(got) != tt.want:
			t.Errorf("%s:\n got %s\nwant %s", tt.name, got, tt.want)
		}
	}
}
