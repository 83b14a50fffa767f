package protocol

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/inferload/inferload/record"
)

// APIHTTP is a templated HTTP API, for an AI service none of the others
// speak: the method, path and body come from a template (HTTPAPIOptions,
// OpenAIBody.Template) and the reply is read in one of the ResponseModes,
// its output text, token count and error found by dot paths.
const APIHTTP API = "http"

// The ways an http API's reply is read (HTTPAPIOptions.Response).
const (
	// ResponseNone: any 2xx reply succeeds; its body is read and ignored,
	// and its end is the first "token" (as for embeddings).
	ResponseNone = "none"
	// ResponseJSON: one JSON body (the default).
	ResponseJSON = "json"
	// ResponseSSE: Server-Sent Events, one JSON object (or text) per
	// data event; "data: [DONE]" ends the stream if sent.
	ResponseSSE = "sse"
	// ResponseNDJSON: one JSON object a line.
	ResponseNDJSON = "ndjson"
	// ResponseChunked: opaque text in HTTP chunks, each read that delivers
	// bytes one content event (as TorchServe's streams).
	ResponseChunked = "chunked"
)

// ResponseModes lists the modes, in the order messages name them.
var ResponseModes = []string{ResponseNone, ResponseJSON, ResponseSSE, ResponseNDJSON, ResponseChunked}

// HTTPAPIOptions is what a templated http API sends and how its reply is
// read; the body template is rendered per request (OpenAIBody.Template).
// The zero value of each field is its documented default.
type HTTPAPIOptions struct {
	// Method is GET, POST or PUT (default POST).
	Method string
	// Path is joined to the base URL, e.g. "/classify" (default: the base
	// URL itself). It holds no placeholders: the body carries the request.
	Path string
	// Response is one of ResponseModes (default ResponseJSON).
	Response string
	// Text is the dot path (ExtractText's syntax) of the output text in
	// the reply or in each streamed object: an object with a non-empty
	// value there is a content event. Empty: every non-empty object is.
	Text string
	// Tokens is the dot path of an output token count; the last one seen
	// is the request's (a usage figure, as Trace.CompletionTokens).
	Tokens string
	// Error is the dot path of an error message: a reply or object with a
	// non-empty value there fails the request (a 2xx reply) or gives the
	// message (an error status).
	Error string
}

// Generates reports whether the service's replies are text counted in
// tokens: a streamed reply (its events are tokens), or one read at a
// text or tokens path. A JSON or bodiless reply with neither (an image
// classifier, a moderation verdict) is a whole answer: no output tokens,
// and max_tokens and ignore_eos do not apply.
func (o HTTPAPIOptions) Generates() bool {
	switch o.Response {
	case ResponseSSE, ResponseNDJSON, ResponseChunked:
		return true
	}
	return o.Text != "" || o.Tokens != ""
}

// httpAPI is an HTTPAPIOptions checked and parsed once.
type httpAPI struct {
	method, response      string
	text, tokens, errPath jsonPath
}

// Validate checks o as NewOpenAI does.
func (o HTTPAPIOptions) Validate() error {
	_, err := o.parse()
	return err
}

// parse checks o and fills its defaults.
func (o HTTPAPIOptions) parse() (*httpAPI, error) {
	h := &httpAPI{method: strings.ToUpper(o.Method), response: o.Response}
	if h.method == "" {
		h.method = http.MethodPost
	}
	if !slices.Contains([]string{"GET", "POST", "PUT"}, h.method) {
		return nil, fmt.Errorf("http API: method %q: want GET, POST or PUT", o.Method)
	}
	if h.response == "" {
		h.response = ResponseJSON
	}
	if !slices.Contains(ResponseModes, h.response) {
		return nil, fmt.Errorf("http API: response %q: want %s", o.Response, strings.Join(ResponseModes, ", "))
	}
	if strings.Contains(o.Path, "{{") || strings.ContainsAny(o.Path, "?#") {
		return nil, fmt.Errorf("http API: path %q: want a plain path such as /classify (no placeholders, query or fragment)", o.Path)
	}
	var err error
	for _, p := range []struct {
		name, path string
		dst        *jsonPath
	}{{"text", o.Text, &h.text}, {"tokens", o.Tokens, &h.tokens}, {"error", o.Error, &h.errPath}} {
		if *p.dst, err = parseExtract(p.path); err != nil {
			return nil, fmt.Errorf("http API: %s: %w", p.name, err)
		}
	}
	return h, nil
}

// streams reports whether the reply is read as a stream of events.
func (h *httpAPI) streams() bool {
	return h.response == ResponseSSE || h.response == ResponseNDJSON || h.response == ResponseChunked
}

// Streams reports whether o's replies are streams (TTFT and ITL mean
// something): sse, ndjson and chunked.
func (o HTTPAPIOptions) Streams() bool {
	h, err := o.parse()
	return err == nil && h.streams()
}

// readHTTP reads an http API's 2xx reply in its response mode.
func (cl *call) readHTTP(resp *http.Response) error {
	h := cl.c.httpAPI
	switch h.response {
	case ResponseNone:
		return cl.wholeBody(resp.Body, func(_ []byte, a arrival) error {
			cl.clock.first(cl.t, a)
			return nil
		})
	case ResponseSSE:
		return cl.readHTTPEvents(resp)
	case ResponseNDJSON:
		return cl.readHTTPLines(resp)
	case ResponseChunked:
		return cl.readTorchServeStream(resp)
	}
	return cl.wholeBody(resp.Body, func(b []byte, a arrival) error {
		if err := cl.httpObject(b, a); err != nil {
			return err
		}
		return emptyOutput(cl.t)
	})
}

// readHTTPEvents reads an SSE reply: each data event is one object;
// "[DONE]" ends it, else the body's clean end does.
func (cl *call) readHTTPEvents(resp *http.Response) error {
	each := func(data []byte, a arrival) (bool, error) {
		if bytes.Equal(bytes.TrimSpace(data), doneData) {
			return true, nil
		}
		return false, cl.httpObject(data, a)
	}
	return cl.readEventStream(resp, each, func() error {
		cl.endRead()
		return emptyOutput(cl.t)
	})
}

// readHTTPLines reads an NDJSON reply, one object a line, to the body's
// end. Lines carry the kernel's receive stamps where the connection has
// them, as Ollama's do.
func (cl *call) readHTTPLines(resp *http.Response) error {
	lr := cl.c.lines.Get().(*LineReader)
	lr.resetStamped(resp.Body, cl.rx())
	defer cl.c.putLines(lr)
	defer func() { cl.t.BytesIn = lr.BytesRead() }()
	for {
		line, err := lr.Next()
		switch {
		case err == io.EOF:
			cl.endRead()
			return emptyOutput(cl.t)
		case errors.Is(err, ErrEventTooLarge):
			return cl.tooLarge(err)
		case err != nil:
			return err
		}
		if err := cl.httpObject(line.Data, arrival{line.At, line.ReadLag, line.Kernel}); err != nil {
			return err
		}
	}
}

// httpObject folds one reply or streamed object into the trace: its error
// fails the request, its token count is kept, and a non-empty text (or,
// without a text path, any non-empty object) is a content event. Without
// any path the object need not be JSON.
func (cl *call) httpObject(data []byte, a arrival) error {
	h := cl.c.httpAPI
	if h.text == nil && h.tokens == nil && h.errPath == nil {
		if len(bytes.TrimSpace(data)) == 0 {
			return nil
		}
		return cl.token(a, false)
	}
	root, err := decodeReply(data)
	if err != nil {
		return &failure{record.ErrMalformedEvent, fmt.Sprintf("after %d content events: not JSON: %v", cl.t.ContentEvents, err)}
	}
	if msg := firstText(h.errPath.texts(root)); msg != "" {
		return &failure{record.ErrStreamErrorEvent, "error in reply: " + msg}
	}
	if n, ok := tokenCount(h.tokens.texts(root)); ok {
		cl.t.UsageReported = true
		cl.t.CompletionTokens = n
	}
	if h.text == nil || firstText(h.text.texts(root)) != "" {
		return cl.token(a, false)
	}
	return nil
}

// firstText is the first matched value that says something: "", null
// and false say nothing (an "error": null member is no error).
func firstText(texts []string) string {
	for _, s := range texts {
		if s != "" && s != "null" && s != "false" {
			return s
		}
	}
	return ""
}

// tokenCount reads a matched token count: a non-negative integer.
func tokenCount(texts []string) (int, bool) {
	if len(texts) == 0 {
		return 0, false
	}
	n, err := strconv.Atoi(texts[0])
	return n, err == nil && n >= 0
}

// httpErrorText is the message of an http API's error reply: its error
// path's value when it has one, else errorText's guess.
func (c *OpenAI) httpErrorText(body []byte) string {
	if c.httpAPI != nil && c.httpAPI.errPath != nil {
		if root, err := decodeReply(body); err == nil {
			if msg := firstText(c.httpAPI.errPath.texts(root)); msg != "" {
				return msg
			}
		}
	}
	return errorText(body)
}
