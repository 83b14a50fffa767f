// Package protocol speaks one inference API each and turns a server's reply
// (a Server-Sent Events or NDJSON stream, HTTP chunks, or a JSON body) into
// timestamped token events.
// It knows nothing of scheduling or statistics.
package protocol

import (
	"context"
	"time"

	"github.com/inferload/inferload/record"
)

// API names an endpoint family.
type API string

// The APIs this package speaks.
const (
	APIChat        API = "chat"        // POST {base}/chat/completions
	APICompletions API = "completions" // POST {base}/completions
)

// Request is one fully rendered request. Body is built once, before the
// request is due, so no JSON work happens between the schedule's due time
// and the first byte on the wire.
type Request struct {
	API       API
	Body      []byte
	Stream    bool
	MaxTokens int
	// Affinity, when not 0, keeps the requests that share it on one
	// replica of a Balanced client (a closed-loop user's conversation);
	// 0 lets the client take turns.
	Affinity uint64
	// EventsCap is a capacity hint for Trace.EventsUS (usually MaxTokens).
	EventsCap int
	// Timeouts, when not nil, overrides the client's timeouts for this
	// request only, so one client (one connection pool) can serve request
	// classes with different deadlines. Shared read-only by many requests.
	Timeouts *Timeouts
	// TraceID, when not zero, is sent as the W3C traceparent header (with
	// record.SpanID(TraceID, Attempt) as the span) and, in hex, as
	// x-request-id: the key that joins a server's logs and traces to the
	// record (record.TraceID derives it).
	TraceID [16]byte
	// Attempt is the 0-based try of a retried request, so each attempt is
	// its own span.
	Attempt int
	// NoTokens marks a request whose reply is not generated text although
	// its API can give text (triton-grpc asking a tensor model): like
	// embeddings, images and triton-infer (API.Generates), max_tokens,
	// ignore_eos and output tokens do not apply. OpenAIBody.Generates
	// decides it.
	NoTokens bool
	// Documents is how many documents a rerank or score request sent, so
	// a reply scoring one that was not sent is caught; 0 leaves the
	// indexes unchecked.
	Documents int
	// NoPrompt marks a request whose body carries no prompt (a templated
	// http API without {{prompt}}): no input tokens were sent, whatever
	// the workload's lengths said.
	NoPrompt bool
	// KeepReply, when above 0, keeps up to this many bytes of the reply's
	// content-carrying JSON (Trace.Reply) so its answer can be graded;
	// 0 keeps nothing, and an ungraded request pays nothing for it.
	KeepReply int
	// KeepText, when above 0, keeps up to this many bytes of the reply's
	// answer text as it is parsed (Trace.Text) and notes whether it asked
	// for a tool call (Trace.ToolCalls): what an agent graph's next call
	// needs, at the cost of an append per token rather than a second
	// parse of the kept reply.
	KeepText int
	// ExpectAnswer, when not empty, is sent as the ExpectAnswerHeader so
	// the simulator can answer it (a test-only feature: see
	// docs/workload.md "Answers checked under load").
	ExpectAnswer string
}

// ExpectAnswerHeader carries a graded request's expected answer to the
// simulator; real servers ignore it.
const ExpectAnswerHeader = "X-Inferload-Expect-Answer"

// Generates reports whether req's reply is generated text counted in
// tokens.
func (req *Request) Generates() bool { return req.API.Generates() && !req.NoTokens }

// Timeouts is a per-request override of a client's timeouts. A zero field
// keeps the client's value for that bound.
type Timeouts struct {
	// Connect bounds getting a connection (dial, TLS handshake and any wait
	// for a MaxConns slot), timed from Do's start. The client's dialer
	// timeout still applies, so it only shortens the client's bound.
	Connect time.Duration
	// TTFT bounds the time from Do to the first content event.
	TTFT time.Duration
	// Total bounds the whole request.
	Total time.Duration
}

// Trace is what the client saw of one request. All instants are on Go's
// monotonic clock; on the kernel clock (Clock), the arrivals are kernel
// receive stamps converted to it (fromKernel).
type Trace struct {
	// Start is when Do was called (before connecting).
	Start time.Time
	// Sent is when the request's first byte was about to be written
	// (the connection was in hand); on a kernel-stamped connection, when
	// its last byte had been handed to the kernel. Zero if it never got
	// that far.
	Sent time.Time
	// FirstToken is the arrival of the first content-carrying event.
	FirstToken time.Time
	// End is when the reply was fully read or the request failed.
	End time.Time
	// EventsUS holds the arrival offset of each content-carrying event from
	// Sent, in microseconds, stamped when the bytes came off the socket.
	// At most record.MaxEventsKept are kept; later ones are folded into
	// Tail (every gap counted, arrival times dropped).
	EventsUS []int64
	// Tail summarises the content events past record.MaxEventsKept.
	Tail record.EventsTail
	// Clock says which clock stamped FirstToken, EventsUS and End: ClockKernel
	// when every arrival the trace uses carried a fresh kernel receive
	// stamp, else ClockUser for all of them (recordClock); empty without a
	// content event.
	Clock string
	// ReadLag is the longest read lag of the content events (Event.ReadLag):
	// how late, at worst, the client read this reply's bytes after the
	// kernel had them. 0 on the user-space clock, which cannot see it.
	ReadLag time.Duration

	// Status is the HTTP status code, 0 when no reply arrived.
	Status int
	// RetryAfter is the wait a 429 or 503 reply asked for in its
	// Retry-After header (delay-seconds or an HTTP date, converted to a
	// duration when the reply arrived); 0 when absent, unparseable or in
	// the past. Only error replies are parsed, so a stream costs nothing.
	RetryAfter time.Duration
	// ContentEvents counts events carrying generated text (content or
	// reasoning_content); a role-only or usage-only chunk is not one.
	ContentEvents int
	// ReasoningEvents counts the reasoning events: content events that
	// carried reasoning (reasoning_content, reasoning, Ollama's thinking,
	// text inside <think> tags with OpenAIOptions.ThinkTags) and no
	// answer. Every other content event is an answer event.
	ReasoningEvents int
	// FirstReasoning and FirstAnswer are the 1-based positions among the
	// content events of the first reasoning and the first answer event, 0
	// when there was none; FirstReasoningUS and FirstAnswerUS are their
	// offsets from Sent as stamped on arrival, for one that fell past the
	// kept EventsUS (whose offsets are otherwise the ones to use: they are
	// on the trace's final clock).
	FirstReasoning, FirstAnswer     int
	FirstReasoningUS, FirstAnswerUS int64
	// Interleaved is true when a reasoning event came after an answer
	// event; otherwise the first ReasoningEvents events are the reasoning
	// and the rest the answer.
	Interleaved bool
	// UsageReported is true when the server's usage block was seen.
	UsageReported bool
	// PromptTokens, CompletionTokens and ReasoningTokens are the server's
	// usage figures (the last usage block seen), 0 without one.
	PromptTokens     int
	CompletionTokens int
	ReasoningTokens  int
	// FinishReason is the last non-empty finish_reason ("stop", "length", ...).
	FinishReason string
	// CachedTokens is the usage's prompt_tokens_details.cached_tokens.
	CachedTokens int
	// ResponseID is the id the server gave the reply where the API has
	// one the next turn refers to (the Responses API's response.id, sent
	// as previous_response_id); empty otherwise.
	ResponseID string
	// Timings is the server's own account of the request's time, from the
	// final chunk (llama.cpp's "timings"); Timings.Present is false without.
	Timings ServerTimings
	// SawDone is true when a streaming reply ended with its API's end
	// marker: data: [DONE], TGI's generated_text event, Ollama's done:
	// true line (Triton's and TorchServe's streams have none).
	SawDone bool

	// Err classifies the failure; record.ErrNone on success.
	Err    record.ErrorKind
	ErrMsg string // short, never contains secrets

	// BytesOut is the request body's size; BytesIn the reply body's bytes
	// read (headers excluded).
	BytesOut int64
	BytesIn  int64
	// Proto is the reply's protocol ("HTTP/1.1", "HTTP/2.0"), empty
	// without a reply; NewConn is true when the request opened a new
	// connection rather than reusing one (or, on HTTP/2, sharing one).
	Proto   string
	NewConn bool
	// Replica is which of a Balanced client's targets served the request,
	// from 1; 0 for a client of one target.
	Replica int

	// Reply holds the content-carrying JSON objects of the reply (stream
	// chunks or the whole body), one per line, when Request.KeepReply
	// asked for them; ReplyCut is true when some did not fit.
	// ReplyAnswer reads the answer from them.
	Reply    []byte
	ReplyCut bool
	// Text is the answer text of a chat or completions reply, as raw JSON
	// string contents (escapes not decoded; AnswerText decodes them),
	// when Request.KeepText asked for it; TextCut is true when some did
	// not fit. ToolCalls is set when the reply asked for a tool call;
	// ToolCallReply then holds the JSON objects that carried its calls,
	// one per line (ReplyToolCalls reads them), and ToolCallsCut is true
	// when some did not fit (ReplyToolCalls then gives none).
	Text          []byte
	TextCut       bool
	ToolCalls     bool
	ToolCallReply []byte
	ToolCallsCut  bool
}

// Reset clears t for reuse, keeping the EventsUS backing array.
func (t *Trace) Reset() {
	ev := t.EventsUS[:0]
	*t = Trace{EventsUS: ev}
}

// Client sends requests to one target. Implementations are safe for
// concurrent use. Do never panics and never returns until the request is
// finished, failed or ctx is done; every outcome, including failures, is
// described in t.
type Client interface {
	Do(ctx context.Context, req *Request, t *Trace)
}
