package protocol

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestTemplateRender(t *testing.T) {
	t.Parallel()
	f := TemplateFields{Prompt: "a \"b\"\n<c> & d", InputTokens: 12, MaxTokens: 3, Class: "long", Image: "data:image/png;base64,iVBO+/=="}
	tests := []struct {
		src    string
		escape Escape
		want   string
	}{
		// Every placeholder; strings JSON-escaped without quotes, HTML kept.
		{`{"t":"{{prompt}}","n":{{input_tokens}},"m":{{max_tokens}},"c":"{{class}}"}`, EscapeJSON,
			`{"t":"a \"b\"\n<c> & d","n":12,"m":3,"c":"long"}`},
		// The request id is left for the send to fill.
		{`{"id":"{{request_id}}"}`, EscapeJSON, `{"id":"{{request_id}}"}`},
		// The image: its base64 data, or the whole data URI.
		{`{"b64":"{{image}}","url":"{{image_url}}"}`, EscapeJSON, `{"b64":"iVBO+/==","url":"data:image/png;base64,iVBO+/=="}`},
		// A URL query-escapes.
		{`http://h/s?q={{prompt}}&c={{class}}`, EscapeQuery, `http://h/s?q=a+%22b%22%0A%3Cc%3E+%26+d&c=long`},
		// Braces that are not a placeholder's name are literal text.
		{`{{"a":1}} {{ prompt }} {{Prompt}} {{`, EscapeJSON, `{{"a":1}} {{ prompt }} {{Prompt}} {{`},
		// A placeholder twice, and next to literal braces.
		{`{{{prompt}}}{{prompt}}`, EscapeJSON, `{a \"b\"\n<c> & d}a \"b\"\n<c> & d`},
		// No placeholders at all.
		{`plain`, EscapeJSON, `plain`},
	}
	for _, tt := range tests {
		tm, err := ParseTemplate(tt.src, tt.escape)
		if err != nil {
			t.Errorf("%s: %v", tt.src, err)
			continue
		}
		if got := string(tm.Render(f)); got != tt.want {
			t.Errorf("%s:\n got  %s\n want %s", tt.src, got, tt.want)
		}
	}
	// A request id known when rendering (a chain step) is written at once.
	tm, _ := ParseTemplate(`{"id":"{{request_id}}"}`, EscapeJSON)
	if got := string(tm.Render(TemplateFields{RequestID: "00ab"})); got != `{"id":"00ab"}` {
		t.Errorf("request id: %s", got)
	}
}

func TestImageData(t *testing.T) {
	t.Parallel()
	for uri, want := range map[string]string{
		"data:image/jpeg;base64,/9j/4AA=": "/9j/4AA=",
		"data:;base64,":                   "",
		"data:image/png,rawbytes":         "!",
		"https://example.com/a.png":       "!",
		"data:image/png;base64":           "!",
	} {
		got, ok := ImageData(uri)
		if !ok {
			got = "!"
		}
		if got != want {
			t.Errorf("ImageData(%q) = %q, want %q", uri, got, want)
		}
	}
}

// An unknown placeholder is an error naming the known ones.
func TestTemplateUnknownPlaceholder(t *testing.T) {
	t.Parallel()
	for _, src := range []string{`{"q":"{{promt}}"}`, `{{images}}`} {
		_, err := ParseTemplate(src, EscapeJSON)
		if err == nil || !strings.Contains(err.Error(), "unknown placeholder") || !strings.Contains(err.Error(), "{{max_tokens}}") {
			t.Errorf("%s: %v", src, err)
		}
	}
	if err := (HTTPCallOptions{URL: "http://h/{{query}}"}).Validate(); err == nil || !strings.Contains(err.Error(), "url: template: unknown placeholder {{query}}") {
		t.Errorf("chain step url: %v", err)
	}
}

// FuzzTemplate: any template parses or fails cleanly, and a JSON body
// template rendered with any prompt stays JSON that holds the prompt.
func FuzzTemplate(f *testing.F) {
	f.Add(`{"q":"{{prompt}}"}`, "hello \"world\"\n")
	f.Add(`{{prompt}}{{`, "\x00\u2028")
	f.Add(`{"n":{{input_tokens}},"c":"{{class}}"}{{request_id}}`, "<b>")
	f.Fuzz(func(t *testing.T, src, prompt string) {
		if tm, err := ParseTemplate(src, EscapeJSON); err == nil {
			_ = tm.Render(TemplateFields{Prompt: prompt, Class: prompt})
		}
		tm, err := ParseTemplate(`{"q":"{{prompt}}"}`, EscapeJSON)
		if err != nil {
			t.Fatal(err)
		}
		var v struct{ Q string }
		if err := json.Unmarshal(tm.Render(TemplateFields{Prompt: prompt}), &v); err != nil {
			t.Fatalf("rendered body is not JSON: %v", err)
		}
		if utf8.ValidString(prompt) && v.Q != prompt { // invalid bytes become U+FFFD each
			t.Errorf("prompt %q came back %q", prompt, v.Q)
		}
	})
}

// FuzzExtract: any path and body extract or fail cleanly, the same way
// twice; a value put at a one-name path is found there.
func FuzzExtract(f *testing.F) {
	f.Add([]byte(`{"results":[{"text":"a"},{"text":"b"}]}`), "results.*.text", "v")
	f.Add([]byte(`[1,2,{"x":null}]`), "2.x", "")
	f.Add([]byte(`not json`), "a..b", "x")
	f.Fuzz(func(t *testing.T, body []byte, path, value string) {
		a, errA := ExtractText(body, path)
		b, errB := ExtractText(body, path)
		if a != b || (errA == nil) != (errB == nil) {
			t.Fatalf("not deterministic: %q %v / %q %v", a, errA, b, errB)
		}
		if path == "" || strings.ContainsAny(path, ".*") || isIndex(path) || !utf8.ValidString(path) || !utf8.ValidString(value) {
			return
		}
		obj, _ := json.Marshal(map[string]string{path: value})
		got, err := ExtractText(obj, path)
		if err != nil || got != value {
			t.Errorf("%s at %q: %q, %v", obj, path, got, err)
		}
	})
}

func isIndex(s string) bool {
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// {{request_id}} is the trace id sent as x-request-id, or empty when the
// request carries none (trace_context: false).
func TestFillRequestID(t *testing.T) {
	t.Parallel()
	body := []byte(`{"id":"{{request_id}}"}`)
	if got := string(fillRequestID(body, requestID(&Request{}))); got != `{"id":""}` {
		t.Errorf("no trace id: %s", got)
	}
	got := string(fillRequestID(body, requestID(&Request{TraceID: [16]byte{15: 0xab}})))
	if got != `{"id":"000000000000000000000000000000ab"}` {
		t.Errorf("trace id: %s", got)
	}
}
