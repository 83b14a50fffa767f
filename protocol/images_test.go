package protocol

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/inferload/inferload/record"
)

func TestImagesReplies(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		status int
		reply  string
		err    record.ErrorKind
	}{
		// An image as base64: success.
		{"b64", 200, `{"created":1,"data":[{"b64_json":"iVBORw0KGgo="}]}`, record.ErrNone},
		// An image as a URL: success.
		{"url", 200, `{"created":1,"data":[{"url":"https://x/y.png"}]}`, record.ErrNone},
		// 200 with no image is not a success.
		{"no data", 200, `{"created":1,"data":[]}`, record.ErrEmptyOutput},
		// An entry with neither field holds no image.
		{"empty entry", 200, `{"data":[{"b64_json":"","url":null}]}`, record.ErrEmptyOutput},
		// An error object inside a 200 is the server's error.
		{"error body", 200, `{"error":{"message":"nsfw filter"}}`, record.ErrStreamErrorEvent},
		// A cut reply is malformed, never a panic.
		{"cut", 200, `{"data":[{"b64_json":"iVBO`, record.ErrMalformedEvent},
		// An unknown LoRA is the client's error.
		{"bad lora", 400, `{"error":{"message":"unknown lora"}}`, record.ErrHTTP4xx},
		// An overloaded image server.
		{"overloaded", 429, `{"error":{"message":"busy"}}`, record.ErrHTTP429},
		{"crashed", 500, `{"error":{"message":"CUDA out of memory"}}`, record.ErrHTTP5xx},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			body, err := OpenAIBody{Model: "sdxl", Prompt: "a red fox", MaxTokens: 9, Stream: true, IgnoreEOS: true,
				Extra: map[string]any{"size": "512x512", "lora": "pixel-art"}}.Render(APIImages)
			if err != nil {
				t.Fatal(err)
			}
			tr, req := wholeReplyTrace(t, tc.status, tc.reply, &Request{API: APIImages, Body: body, Stream: true})
			checkImagesRequest(t, req)
			if tr.Err != tc.err {
				t.Fatalf("error %q (%s), want %q", tr.Err, tr.ErrMsg, tc.err)
			}
			checkNoTokens(t, tr)
		})
	}
}

// checkImagesRequest checks the path and that the body carries the image
// API's fields and the extra ones, and nothing meant for text.
func checkImagesRequest(t *testing.T, req seenRequest) {
	t.Helper()
	if req.Path != "/v1/images/generations" || req.Header.Get("Accept") != "application/json" {
		t.Errorf("sent to %s with Accept %q (a stream was asked for, but images never stream)", req.Path, req.Header.Get("Accept"))
	}
	b := req.Body
	if b["prompt"] != "a red fox" || b["model"] != "sdxl" || b["n"] != float64(1) || b["size"] != "512x512" || b["lora"] != "pixel-art" {
		t.Errorf("body %v", b)
	}
	for _, k := range []string{"stream", "max_tokens", "ignore_eos", "messages", "stream_options"} {
		if _, ok := b[k]; ok {
			t.Errorf("body has %q: %v", k, b)
		}
	}
}

func TestChatImagesRender(t *testing.T) {
	t.Parallel()
	img := Image{URL: "data:image/png;base64,AAAA", Detail: "low"}
	b, err := OpenAIBody{Prompt: "what <is> this", Images: []Image{img, {URL: "https://x/y.jpg"}}}.Render(APIChat)
	if err != nil {
		t.Fatal(err)
	}
	want := `"messages":[{"role":"user","content":[{"type":"text","text":"what <is> this"},` +
		`{"type":"image_url","image_url":{"url":"data:image/png;base64,AAAA","detail":"low"}},` +
		`{"type":"image_url","image_url":{"url":"https://x/y.jpg"}}]}]`
	if !strings.Contains(string(b), want) {
		t.Errorf("body %s\nwant it to contain %s", b, want)
	}
	// A text-only message keeps the plain string content, unescaped.
	b, _ = OpenAIBody{Messages: []ChatMessage{{Role: "system", Content: "a<b"}, {Role: "user", Content: "hi", Images: []Image{img}}}}.Render(APIChat)
	var v struct {
		Messages []json.RawMessage `json:"messages"`
	}
	if err := json.Unmarshal(b, &v); err != nil || string(v.Messages[0]) != `{"role":"system","content":"a<b"}` {
		t.Errorf("system message %s (%v)", v.Messages[0], err)
	}
	// Every other API refuses images rather than dropping them (http
	// sends them only through its template: TestHTTPTemplateImages;
	// messages as image blocks: TestRenderMessagesImages).
	for _, api := range APIs() {
		if api.SendsImages() || api == APIHTTP {
			continue
		}
		_, err := OpenAIBody{Model: "m", Prompt: "p", Images: []Image{img}}.Render(api)
		if err == nil || !strings.Contains(err.Error(), "cannot send images") {
			t.Errorf("%s: err = %v, want a refusal", api, err)
		}
	}
}

// TestHTTPTemplateImages: the http API sends a request's first image
// through its template's {{image}} or {{image_url}}, and refuses images it
// has no place for instead of sending the request without them.
func TestHTTPTemplateImages(t *testing.T) {
	t.Parallel()
	img := Image{URL: "data:image/jpeg;base64,/9j/AAAA"}
	tmpl := func(src string) *Template {
		tm, err := ParseTemplate(src, EscapeJSON)
		if err != nil {
			t.Fatal(err)
		}
		return tm
	}
	tests := []struct {
		name string
		body OpenAIBody
		want string // the body, or the error's text
	}{
		{"base64 field", OpenAIBody{Prompt: "cat?", Images: []Image{img, {URL: "data:image/png;base64,iVBO"}},
			Template: tmpl(`{"q":"{{prompt}}","image":"{{image}}"}`)}, `{"q":"cat?","image":"/9j/AAAA"}`},
		{"data URI field", OpenAIBody{Messages: []ChatMessage{{Role: "user", Content: "x", Images: []Image{img}}},
			Template: tmpl(`{"url":"{{image_url}}"}`)}, `{"url":"data:image/jpeg;base64,/9j/AAAA"}`},
		{"no image: empty fields", OpenAIBody{Prompt: "p", Template: tmpl(`{"image":"{{image}}"}`)}, `{"image":""}`},
		{"no place for it", OpenAIBody{Prompt: "p", Images: []Image{img}, Template: tmpl(`{"q":"{{prompt}}"}`)},
			"1 image(s) to send but the http API's body template has no {{image}} or {{image_url}}"},
		{"a URL is not base64", OpenAIBody{Prompt: "p", Images: []Image{{URL: "https://h/a.jpg"}}, Template: tmpl(`{"i":"{{image}}"}`)},
			"{{image}} needs a base64 data URI"},
		{"no template", OpenAIBody{Prompt: "p", Images: []Image{img}}, "has no body template"},
	}
	for _, tt := range tests {
		got, err := tt.body.Render(APIHTTP)
		if err != nil {
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("%s: err = %v, want %q", tt.name, err, tt.want)
			}
			continue
		}
		if string(got) != tt.want {
			t.Errorf("%s: body %s, want %s", tt.name, got, tt.want)
		}
	}
}
