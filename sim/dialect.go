package sim

import (
	"net/http"
)

// dialect renders one API's replies around the one engine: the same
// batching, lengths and faults answer every API, each in its server's
// own shapes (docs/apis.md). A dialect belongs to one call.
type dialect interface {
	// contentType is the streamed reply's Content-Type.
	contentType() string
	// holdsLast reports whether the stream's final object carries the last
	// token (TGI), so the last token is written by end, not token.
	holdsLast() bool
	// start is written before the first token (the chat role chunk), or nil.
	start() []byte
	// token renders token i's text; broken leaves it unparseable, for the
	// malformed fault (nil when the API's output is opaque and cannot be).
	token(i int, text string, broken bool) []byte
	// errorEvent is the in-stream error of the error_event fault, ending
	// the stream; nil when the API has none (the connection is cut).
	errorEvent(msg string) []byte
	// end renders the stream's close after sent tokens: finish, usage,
	// timings and the end marker (left out when marker is false, for the
	// missing_done fault). last is the held-back last token's text for a
	// dialect that holdsLast.
	end(sent int, last string, marker bool) []byte
	// whole writes a non-streaming reply's headers and returns its body.
	whole(h http.Header, text string, n int) []byte
	// errorBody renders an HTTP error reply's body.
	errorBody(e *apiError) []byte
}

// unstreamed is the stream half of a dialect whose endpoint never streams
// (the pooling APIs, Triton's /infer): a JSON reply, and stream methods
// that render nothing, as they are never called.
type unstreamed struct{}

func (unstreamed) contentType() string            { return "application/json" }
func (unstreamed) holdsLast() bool                { return false }
func (unstreamed) start() []byte                  { return nil }
func (unstreamed) token(int, string, bool) []byte { return nil }
func (unstreamed) errorEvent(string) []byte       { return nil }
func (unstreamed) end(int, string, bool) []byte   { return nil }

// writeError answers the call with an HTTP error in its API's shape.
func (c *call) writeError(e *apiError) {
	c.w.Header().Set("Content-Type", "application/json")
	c.w.WriteHeader(e.status)
	_, _ = c.w.Write(c.d.errorBody(e))
}

// openaiDialect is the OpenAI chat and completions replies.
type openaiDialect struct {
	c  *call
	cr *chunkRenderer
}

func (d *openaiDialect) contentType() string { return "text/event-stream" }
func (d *openaiDialect) holdsLast() bool     { return false }

func (d *openaiDialect) start() []byte {
	if d.c.g.api != apiChat {
		return nil
	}
	return d.cr.role()
}

func (d *openaiDialect) token(i int, text string, broken bool) []byte {
	if d.c.callsTool() {
		return d.toolCallChunk()
	}
	if i < d.c.reasoning {
		return d.cr.reasoningToken(text, broken)
	}
	return d.cr.token(text, broken)
}

func (d *openaiDialect) errorEvent(msg string) []byte {
	e := &apiError{typ: "server_error", code: "internal_error", msg: msg}
	return append(append(append([]byte("data: "), e.body()...), "\n\n"...), doneEvent...)
}

func (d *openaiDialect) end(sent int, _ string, marker bool) []byte {
	c := d.c
	out := append([]byte(nil), d.cr.finish(c.st.reason)...)
	if c.g.includeUsage {
		out = append(out, d.cr.usage(usage{prompt: c.g.promptTokens, completion: sent, cached: c.st.cached,
			reasoning: min(c.reasoning, sent), hideCached: c.s.prof.HideCachedTokens}, c.st.times)...)
	}
	if marker {
		out = append(out, doneEvent...)
	}
	return out
}

func (d *openaiDialect) whole(h http.Header, text string, n int) []byte {
	c := d.c
	h.Set("Content-Type", "application/json")
	u := usage{prompt: c.g.promptTokens, completion: n, cached: c.st.cached, reasoning: min(c.reasoning, n), hideCached: c.s.prof.HideCachedTokens}
	if c.callsTool() {
		return d.toolCallBody(u)
	}
	return completionBody(c.g.api, c.id, c.created, c.s.modelJSON, text, c.st.reason, u)
}

func (d *openaiDialect) errorBody(e *apiError) []byte { return e.body() }
