// Package record holds what happened during a run: the per-request Result,
// the append-only record log, histograms per metric and the error taxonomy.
package record

// ErrorKind classifies why a request failed. The empty kind means success.
// Kinds are stable strings: they are written to records and summary.json.
type ErrorKind string

// The error taxonomy. Every failed request carries exactly one kind.
const (
	ErrNone              ErrorKind = ""
	ErrConnRefused       ErrorKind = "connection_refused"
	ErrConnReset         ErrorKind = "connection_reset"
	ErrTLS               ErrorKind = "tls"
	ErrConnectTimeout    ErrorKind = "connect_timeout"
	ErrTimeoutBeforeTTFT ErrorKind = "timeout_before_first_token"
	ErrTimeoutAfterTTFT  ErrorKind = "timeout_after_first_token"
	ErrHTTP4xx           ErrorKind = "http_4xx"
	ErrHTTP429           ErrorKind = "http_429"
	ErrHTTP5xx           ErrorKind = "http_5xx"
	ErrStreamIncomplete  ErrorKind = "stream_incomplete" // ended without [DONE]
	ErrMalformedEvent    ErrorKind = "malformed_event"
	ErrStreamErrorEvent  ErrorKind = "stream_error_event"
	ErrEmptyOutput       ErrorKind = "empty_output"
	// ErrOutputOverrun: the stream went on far past max_tokens (more than
	// OverrunLimit content events); it is cut off rather than read forever.
	ErrOutputOverrun ErrorKind = "output_overrun"
	ErrCanceled      ErrorKind = "canceled" // cut off when the run stopped
	// ErrClientResource: the load generator itself ran out of something
	// (file descriptors, ports, its memory budget for whole replies): a
	// failure of the client, not of the target.
	ErrClientResource ErrorKind = "client_resource"
	// ErrReplyTooLarge: a non-streamed reply longer than the client's cap
	// for one reply (64 MiB); it is not read past the cap.
	ErrReplyTooLarge ErrorKind = "reply_too_large"
	// ErrHTTPProtocol: the reply broke HTTP itself: a status outside
	// 100-599, headers past the size limit or a flood of 1xx replies, bad
	// chunked encoding, bytes that are not HTTP, a broken HTTP/2 stream.
	ErrHTTPProtocol ErrorKind = "http_protocol"
	ErrOther        ErrorKind = "other"
)

// ErrorKinds lists every failure kind in the order reports show them.
var ErrorKinds = []ErrorKind{
	ErrConnRefused, ErrConnReset, ErrTLS, ErrConnectTimeout,
	ErrTimeoutBeforeTTFT, ErrTimeoutAfterTTFT, ErrHTTP4xx, ErrHTTP429,
	ErrHTTP5xx, ErrStreamIncomplete, ErrMalformedEvent, ErrStreamErrorEvent,
	ErrEmptyOutput, ErrOutputOverrun, ErrReplyTooLarge, ErrHTTPProtocol, ErrCanceled,
	ErrClientResource, ErrOther,
}

// OverrunLimit is the most content events a stream asked for maxTokens
// may carry before it is cut off as ErrOutputOverrun: twice max_tokens plus
// 64, since one event can carry less than a token (a split UTF-8
// character, an empty delta) but a server honouring max_tokens never sends
// twice as many. 0 (no max_tokens) means no limit: the server decides,
// and MaxEventsKept still bounds the memory.
func OverrunLimit(maxTokens int) int {
	if maxTokens <= 0 {
		return 0
	}
	return 2*maxTokens + 64
}

// TokenSource says where a request's output token count came from.
type TokenSource string

const (
	// TokensUsage: the server's usage block reported the count.
	TokensUsage TokenSource = "usage"
	// TokensCounted: no usage came back; the count is the number of
	// content-carrying stream events (or 0 for a non-streaming reply without usage).
	TokensCounted TokenSource = "counted"
	// TokensNone: the reply is not generated text (embeddings, images,
	// tensors) and no usage came back: there was nothing to count. Records
	// from before it have "" or "counted" there, read as counted.
	TokensNone TokenSource = "none"
)

// Result is one request as it happened: one line of the run's records
// (records.jsonl.zst, where EventsUS is written as deltas: events_delta.go).
//
// Time offsets are microseconds. SendUS and IntendedUS are measured from the
// run's start on the monotonic clock. Latencies (TTFTUS, E2EUS) are measured
// from the latency origin: the intended time in open-loop runs (so a slow
// client can never hide server latency: no coordinated omission) and the send
// time in closed-loop runs. EventsUS are arrival offsets of the
// content-carrying stream events from the send time, enough to recompute
// every statistic later.
type Result struct {
	ID uint64 `json:"id"`
	// Step is the 1-based stage of a staged run or sweep that sent the
	// request; 0 in a single-phase run.
	Step  int    `json:"step,omitempty"`
	Class string `json:"class,omitempty"`
	// Turn is the request's 1-based turn in its multi-turn conversation;
	// 0 for a request that is not part of one. Session names that
	// conversation: the ID of its first turn, unique in the run (written
	// only when Turn is set, so the run's first request can start one).
	// summary.json's sessions are folded from both (session.go).
	Turn    int    `json:"turn,omitempty"`
	Session uint64 `json:"session,omitempty"`
	// SessionCalls is how many calls the record's session holds when
	// sessions differ in length (a replayed agent trace's); 0 when its
	// class's turns say it. The session figures judge a session whole
	// once that many of its records are in.
	SessionCalls int `json:"session_calls,omitempty"`
	// ReplyCut is set on a conversation turn whose reply was to be
	// threaded into the next turn's history but was longer than the
	// client keeps (MaxReplyKept) or held no text it could read: the next
	// turn carries synthetic text of the asked length in its place
	// (docs/workload.md#conversations). On a chain or graph task, some
	// call's reply was too long to pass on whole (ChainStep.ReplyCut).
	ReplyCut bool `json:"reply_cut,omitempty"`
	// Expect is ExpectRejection when a 4xx reply is a correct answer (bad
	// input); empty when only a success passes.
	Expect string `json:"expect,omitempty"`
	// Graded is true when the request carried an expected answer and its
	// reply was graded; Correct when the reply held that answer;
	// Unparsable when no answer could be read from it (docs/workload.md
	// "Answers checked under load"). A failed request is not graded.
	Graded     bool `json:"graded,omitempty"`
	Correct    bool `json:"correct,omitempty"`
	Unparsable bool `json:"unparsable,omitempty"`
	Warmup     bool `json:"warmup,omitempty"`
	// OpenLoop is true when IntendedUS is meaningful.
	OpenLoop   bool  `json:"open_loop,omitempty"`
	IntendedUS int64 `json:"intended_us,omitempty"`
	SendUS     int64 `json:"send_us"`
	// QueueDelayUS is SendUS-IntendedUS in open-loop runs, 0 otherwise.
	QueueDelayUS int64 `json:"queue_delay_us,omitempty"`
	// Late is set when an open-loop request started more than the late
	// threshold after its intended time.
	Late bool `json:"late,omitempty"`

	// TTFTUS is 0 when no content event arrived.
	TTFTUS int64 `json:"ttft_us,omitempty"`
	// Clock is ClockKernel when TTFTUS, E2EUS and EventsUS come from the
	// kernel's receive timestamps; empty for the user-space clock.
	Clock string `json:"clock,omitempty"`
	// ReadLagUS is, on the kernel clock, the longest gap between the
	// kernel receiving one of the reply's content events and the client's
	// read returning it: the client's own delay (docs/metrics.md#read-lag).
	ReadLagUS int64 `json:"read_lag_us,omitempty"`
	// TTFRUS and TTFOUS are the times to the first reasoning event and
	// the first answer event, from the latency origin as TTFTUS
	// (docs/metrics.md#reasoning). Both are set only for a reply that
	// reasoned (ReasoningEvents > 0), TTFOUS only when an answer came;
	// a reply that did not reason has no TTFR and its TTFO is its TTFT
	// (TTFOUS the function), so records of other models are unchanged.
	TTFRUS   int64   `json:"ttfr_us,omitempty"`
	TTFOUS   int64   `json:"ttfo_us,omitempty"`
	E2EUS    int64   `json:"e2e_us"`
	EventsUS []int64 `json:"events_us,omitempty"`
	// EventsTail summarises the content events past the first
	// MaxEventsKept (events_tail.go); nil for every stream shorter than that.
	EventsTail *EventsTail `json:"events_tail,omitempty"`

	Stream          bool `json:"stream"`
	InputTokens     int  `json:"input_tokens"`
	OutputTokens    int  `json:"output_tokens"`
	ReasoningTokens int  `json:"reasoning_tokens,omitempty"`
	// ReasoningEvents counts the content events that carried reasoning
	// and no answer. Unless ChannelsInterleaved, they are the stream's
	// first ReasoningEvents events and every later one is the answer's,
	// which is all the per-channel figures need (reasoning.go).
	ReasoningEvents int `json:"reasoning_events,omitempty"`
	// ChannelsInterleaved: a reasoning event came after an answer event,
	// so the events are not one reasoning phase then one answer phase;
	// such a reply has no per-channel ITL (docs/metrics.md#reasoning).
	ChannelsInterleaved bool        `json:"channels_interleaved,omitempty"`
	TokenSource         TokenSource `json:"token_source,omitempty"`
	// UsageImplausible: the server's usage gave an output count the
	// reply cannot have (PlausibleUsage), so the counted one is used and
	// TokenSource is TokensCounted, UsageOutputTokens keeping the
	// server's; or a prompt count the request cannot have
	// (PlausiblePrompt), so PromptTokensSent is the input, and
	// UsageInputTokens keeps the server's. Which of the two is set says
	// which count was refused.
	UsageImplausible  bool `json:"usage_implausible,omitempty"`
	UsageOutputTokens int  `json:"usage_output_tokens,omitempty"`
	UsageInputTokens  int  `json:"usage_input_tokens,omitempty"`
	// PromptTokensSent is the client's own estimate of the prompt length.
	PromptTokensSent int    `json:"prompt_tokens_sent,omitempty"`
	MaxTokens        int    `json:"max_tokens,omitempty"`
	IgnoreEOS        bool   `json:"ignore_eos,omitempty"`
	FinishReason     string `json:"finish_reason,omitempty"`
	// ResponseID is the id the server gave its reply where the next turn
	// of a conversation refers to it (the Responses API's response id,
	// sent as previous_response_id); empty for other APIs.
	ResponseID string `json:"response_id,omitempty"`

	Status   int       `json:"status,omitempty"`
	Error    ErrorKind `json:"error,omitempty"`
	ErrorMsg string    `json:"error_msg,omitempty"`

	BytesOut int64 `json:"bytes_out,omitempty"`
	BytesIn  int64 `json:"bytes_in,omitempty"`
	// Proto is the reply's protocol ("HTTP/1.1", "HTTP/2.0"), empty when
	// no reply came; NewConn is true when the request (its last attempt)
	// opened a connection instead of reusing or sharing one.
	Proto   string `json:"proto,omitempty"`
	NewConn bool   `json:"new_conn,omitempty"`
	// Replica is which of the target's base URLs served the request (its
	// last attempt): 1 for target.url, 2 for its first replica, ...; 0
	// when the target has one.
	Replica int `json:"replica,omitempty"`
	// Images is how many images the request sent (multimodal chat), and
	// ImageSize the largest one's size ("1920x1080", or "unknown" for an
	// http URL); BytesOut is then mostly image bytes.
	Images    int    `json:"images,omitempty"`
	ImageSize string `json:"image_size,omitempty"`

	// Attempts are the earlier attempts of a retried request, oldest
	// first; the record's own fields describe its last attempt. Latencies
	// still count from the first attempt's origin, so a retry never hides
	// latency. Empty when the first attempt was the last.
	Attempts []Attempt `json:"attempts,omitempty"`
	// RetryStop says why a retryable failure was not retried (one of the
	// RetryStop* constants); empty when retries were off or not needed.
	RetryStop string `json:"retry_stop,omitempty"`
	// TraceID is the request's join key (TraceID, 32 hex digits): sent as
	// the trace id of its W3C traceparent and as its x-request-id, so a
	// server's logs or traces find the record. Empty when the plan turned
	// trace context off.
	TraceID string `json:"trace_id,omitempty"`
	// CachedTokens is the prompt tokens the server says its prefix cache
	// served (vLLM's usage.prompt_tokens_details.cached_tokens, llama.cpp's
	// timings.cache_n); 0 when none or not reported.
	CachedTokens int `json:"cached_tokens,omitempty"`
	// ReuseTokens is how much of the prompt the workload built to be
	// served by a prefix cache: the tokens of its leading blocks an
	// earlier request of the run sent (a Mooncake trace's hash_ids); 0
	// when none. summary.json's prefix_reuse sets it against CachedTokens.
	ReuseTokens int `json:"reuse_tokens,omitempty"`
	// Server is the server's own account of the request's time, in band
	// (llama.cpp's final-chunk timings); nil when the server sent none.
	Server *ServerTime `json:"server,omitempty"`
	// Chain lists the calls of a multi-step chain request in order, up to
	// the one that failed (record/chain.go); the record's own fields then
	// describe the chain end to end. Empty for single-call requests.
	Chain []ChainStep `json:"chain,omitempty"`
}

// OK reports whether the request succeeded.
func (r *Result) OK() bool { return r.Error == ErrNone }

// MeasuredSuccess reports whether r is a success of the measured window:
// not warm-up, no error. Every latency figure of a summary (TTFT, ITL,
// TPOT, E2E, client queue delay) and every latency drawing of the report
// is made of these records alone: a failure's E2E goes to failed_e2e_ms,
// a warm-up record only to the counts (docs/metrics.md).
func (r *Result) MeasuredSuccess() bool { return !r.Warmup && r.OK() }

// OriginUS is the run-clock instant latencies are measured from: the
// intended time in open-loop runs, the send time otherwise.
func (r *Result) OriginUS() int64 {
	if r.OpenLoop {
		return r.IntendedUS
	}
	if len(r.Attempts) > 0 {
		return r.Attempts[0].SendUS // a retried request's latency starts at its first try
	}
	return r.SendUS
}

// DoneUS is the run-clock instant the request finished (origin + E2E): the
// time per-second series windows are keyed by.
func (r *Result) DoneUS() int64 { return r.OriginUS() + r.E2EUS }

// Shift moves r by us on the run clock: its send and, when open-loop, its
// intended time, and every earlier attempt; its durations stay as they
// are. A stage's records move onto the run clock by it, a segment's onto a
// merged run's.
func (r *Result) Shift(us int64) {
	r.SendUS += us
	for k := range r.Attempts {
		r.Attempts[k].SendUS += us
		r.Attempts[k].EndUS += us
	}
	if r.OpenLoop {
		r.IntendedUS += us
	}
}

// maxTokensPerEvent bounds how many tokens one content event of a stream
// plausibly carries: servers send one to a few per chunk (speculative
// decoding a handful), never dozens.
const maxTokensPerEvent = 64

// PlausibleUsage reports whether a server's completion_tokens can be true
// of a reply with events content events (0 for a non-streamed reply) that
// asked for maxTokens (0: no bound): not 0 beside a streamed answer, not
// more than maxTokensPerEvent an event, not beyond what a stream may run
// to past max_tokens (OverrunLimit). A count that did not parse as a
// plain integer ("10", 1e20) reads as 0 and fails the first test.
func PlausibleUsage(usage, events, maxTokens int) bool {
	switch {
	case usage < 0:
		return false
	case events > 0 && usage == 0:
		return false
	case events > 0 && usage > events*maxTokensPerEvent:
		return false
	case maxTokens > 0 && usage > OverrunLimit(maxTokens):
		return false
	}
	return true
}

// The prompt a server may count beyond the client's estimate of it
// (PromptTokensSent): another tokenizer reads text in up to a few times
// as many tokens, a chat template and images add a bounded number.
const (
	promptTokensFactor = 8
	promptTokensSlack  = 65536
	// maxPromptTokens bounds a prompt whose length the client does not
	// know (PromptTokensSent 0): no served model's context is longer.
	maxPromptTokens = 10_000_000
)

// PlausiblePrompt reports whether a server's prompt_tokens can be true of
// a request whose prompt the client estimated at sent tokens (0: unknown):
// not negative, not over 8 × sent + 65,536, and never over 10 million.
// 2147483647 beside a prompt of 9 tokens is not, and summed it would make
// the run's input tokens/s 5.7e12.
func PlausiblePrompt(usage, sent int) bool {
	limit := maxPromptTokens
	if sent > 0 {
		limit = min(limit, promptTokensFactor*sent+promptTokensSlack)
	}
	return usage >= 0 && usage <= limit
}

// ServerTime is what a server measured of one request itself, in its own
// clock: durations only, never instants, so nothing here is compared with
// the client's clock. Microseconds.
type ServerTime struct {
	// PrefillUS is the prompt's evaluation (llama.cpp prompt_ms) over
	// PromptN prompt tokens (cached ones not counted).
	PrefillUS int64 `json:"prefill_us"`
	PromptN   int   `json:"prompt_n,omitempty"`
	// DecodeUS is the generation (llama.cpp predicted_ms) of DecodeN tokens.
	DecodeUS int64 `json:"decode_us"`
	DecodeN  int   `json:"decode_n,omitempty"`
	// QueueUS is the wait before prefill began, when the server reports it
	// (HasQueue); llama.cpp does not, inferload's simulator does.
	QueueUS  int64 `json:"queue_us,omitempty"`
	HasQueue bool  `json:"has_queue,omitempty"`
	// FromSpan is set when the figures came from an OTLP span joined to
	// the record (Span.ServerTime) rather than from the reply itself: only
	// on the joined copy a summary is built from, never in records.jsonl.
	FromSpan bool `json:"-"`
	// InferenceUS is prefill and decode together from a server that does
	// not split them (TGI's x-inference-time); PrefillUS and DecodeUS
	// are 0 then.
	InferenceUS int64 `json:"inference_us,omitempty"`
}
