package protocol

import (
	"cmp"
	"encoding/hex"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
)

// The placeholders a request template may hold (docs/apis.md, "Templated
// HTTP"). RequestIDPlaceholder is filled when the request is sent, with
// the hex trace id also sent as x-request-id. ImagePlaceholder and
// ImageURLPlaceholder carry the request's image (its first, when a class
// sends several): the base64 data alone, or the whole data URI.
const (
	InputTokensPlaceholder = "{{input_tokens}}"
	MaxTokensPlaceholder   = "{{max_tokens}}"
	ClassPlaceholder       = "{{class}}"
	RequestIDPlaceholder   = "{{request_id}}"
	ImagePlaceholder       = "{{image}}"
	ImageURLPlaceholder    = "{{image_url}}"
)

// placeholders lists every placeholder a template may hold.
var placeholders = []string{PromptPlaceholder, InputTokensPlaceholder, MaxTokensPlaceholder, ClassPlaceholder,
	RequestIDPlaceholder, ImagePlaceholder, ImageURLPlaceholder}

// TemplateFields are the values a template's placeholders are replaced by.
type TemplateFields struct {
	Prompt      string
	InputTokens int
	MaxTokens   int
	Class       string
	// Image is the request's image as a data URI (data:image/jpeg;base64,…)
	// or a URL; ImagePlaceholder needs a base64 data URI (ImageData).
	Image string
	// RequestID, when known at rendering, fills RequestIDPlaceholder;
	// empty keeps the placeholder for fillRequestID.
	RequestID string
}

// ImageData returns the base64 payload of a data URI, the value
// ImagePlaceholder stands for; ok is false for anything else (an http(s)
// URL, a data URI that is not base64).
func ImageData(uri string) (data string, ok bool) {
	rest, ok := strings.CutPrefix(uri, "data:")
	if !ok {
		return "", false
	}
	meta, data, ok := strings.Cut(rest, ",")
	if !ok || !strings.HasSuffix(meta, ";base64") {
		return "", false
	}
	return data, true
}

// Escape says how a template's string values are written: inside a JSON
// string (a body) or query-escaped (a URL).
type Escape int

const (
	// EscapeJSON writes strings escaped for the inside of a JSON string,
	// without quotes, so `{"q": "{{prompt}}"}` stays valid JSON whatever
	// the prompt holds.
	EscapeJSON Escape = iota
	// EscapeQuery writes strings query-escaped.
	EscapeQuery
)

// Template is a parsed request template: literal text and placeholders.
// It is immutable and safe for concurrent use.
type Template struct {
	parts  []templatePart
	escape Escape
	// src is the template as written, for messages.
	src string
}

type templatePart struct {
	literal string
	field   string // a placeholder, "" for a literal
}

// ParseTemplate splits src at its placeholders. A "{{name}}" whose name is
// not a known placeholder is an error naming the known ones, so a typo
// fails at startup instead of being sent thousands of times.
func ParseTemplate(src string, escape Escape) (*Template, error) {
	t := &Template{escape: escape, src: src}
	rest := src
	for {
		i := strings.Index(rest, "{{")
		if i < 0 {
			break
		}
		j := strings.Index(rest[i:], "}}")
		if j < 0 {
			break // a lone "{{" is literal text
		}
		name := rest[i : i+j+2]
		if !isPlaceholderName(name[2 : len(name)-2]) {
			// Not a placeholder: keep one brace and look again, so
			// "{{{prompt}}}" is a brace around a placeholder.
			t.add(rest[:i+1], "")
			rest = rest[i+1:]
			continue
		}
		if !slices.Contains(placeholders, name) {
			return nil, fmt.Errorf("template: unknown placeholder %s (want %s)", name, strings.Join(placeholders, ", "))
		}
		t.add(rest[:i], "")
		t.add("", name)
		rest = rest[i+j+2:]
	}
	t.add(rest, "")
	return t, nil
}

// isPlaceholderName reports whether s looks like a placeholder's name
// (lower-case letters and '_'): other "{{...}}" text, such as JSON that
// happens to hold braces, is literal.
func isPlaceholderName(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if (r < 'a' || r > 'z') && r != '_' {
			return false
		}
	}
	return true
}

// add appends a part, merging adjacent literals.
func (t *Template) add(literal, field string) {
	if field == "" {
		if literal == "" {
			return
		}
		if n := len(t.parts); n > 0 && t.parts[n-1].field == "" {
			t.parts[n-1].literal += literal
			return
		}
	}
	t.parts = append(t.parts, templatePart{literal: literal, field: field})
}

// Has reports whether the template holds placeholder p.
func (t *Template) Has(p string) bool {
	for _, part := range t.parts {
		if part.field == p {
			return true
		}
	}
	return false
}

// String returns the template as written.
func (t *Template) String() string { return t.src }

// TakesImages reports whether the template has a place for a request's
// image: ImagePlaceholder or ImageURLPlaceholder.
func (t *Template) TakesImages() bool { return t.Has(ImagePlaceholder) || t.Has(ImageURLPlaceholder) }

// Render returns the template with its placeholders replaced by f's
// values. RequestIDPlaceholder is kept as written when f has no RequestID:
// a body rendered before it is due learns its id when sent
// (fillRequestID).
func (t *Template) Render(f TemplateFields) []byte {
	var b []byte
	for _, p := range t.parts {
		switch p.field {
		case "":
			b = append(b, p.literal...)
		case PromptPlaceholder:
			b = t.appendString(b, f.Prompt)
		case ClassPlaceholder:
			b = t.appendString(b, f.Class)
		case InputTokensPlaceholder:
			b = strconv.AppendInt(b, int64(f.InputTokens), 10)
		case MaxTokensPlaceholder:
			b = strconv.AppendInt(b, int64(f.MaxTokens), 10)
		case RequestIDPlaceholder:
			b = append(b, cmp.Or(f.RequestID, RequestIDPlaceholder)...)
		case ImageURLPlaceholder:
			b = t.appendString(b, f.Image)
		case ImagePlaceholder:
			data, _ := ImageData(f.Image) // checked where the image is chosen (OpenAIBody.Render)
			b = t.appendString(b, data)
		}
	}
	return b
}

// appendString writes s with the template's escaping.
func (t *Template) appendString(b []byte, s string) []byte {
	if t.escape == EscapeQuery {
		return append(b, url.QueryEscape(s)...)
	}
	n := len(b)
	b = appendJSONString(b, s)
	copy(b[n:], b[n+1:len(b)-1]) // drop the quotes: the template has its own
	return b[:len(b)-2]
}

// requestID is the id {{request_id}} stands for: the request's trace id
// in hex, as x-request-id carries it, or "" when it has none.
func requestID(req *Request) string {
	if req.TraceID == ([16]byte{}) {
		return ""
	}
	return hex.EncodeToString(req.TraceID[:])
}

// fillRequestID replaces RequestIDPlaceholder in a rendered template by
// id (hex digits: no escaping needed in JSON or a URL).
func fillRequestID(rendered []byte, id string) []byte {
	return []byte(strings.ReplaceAll(string(rendered), RequestIDPlaceholder, id))
}
