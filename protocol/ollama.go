package protocol

import (
	"errors"
	"io"
	"net/http"

	"github.com/inferload/inferload/record"
)

// OllamaLine is what one Ollama object says: a line of an /api/chat or
// /api/generate stream ({"model", "created_at", "message": {"role",
// "content", "thinking"} or "response", "done"}), the final line or a
// whole reply (done: true, with done_reason, the counts and the
// durations in nanoseconds), or an error ({"error": "..."}). Byte slices
// alias the scanned data.
type OllamaLine struct {
	// Content is true for a non-empty message.content or response, or a
	// non-empty message.tool_calls.
	Content bool
	// Reasoning is true for a non-empty thinking (message.thinking or, on
	// /api/generate, the top-level thinking).
	Reasoning bool
	// Done is true on the final object; DoneReason is its done_reason
	// ("stop", "length", "load", "unload").
	Done       bool
	DoneReason []byte
	// Counts is true when prompt_eval_count or eval_count was present:
	// the usage of the final object.
	Counts          bool
	PromptEvalCount int
	EvalCount       int
	// The final object's durations, in nanoseconds: total_duration,
	// load_duration (loading the model, inside the total),
	// prompt_eval_duration (the prompt: prefill) and eval_duration (the
	// generation: decode).
	TotalNS, LoadNS, PromptEvalNS, EvalNS int64
	// Error is true for an error object; ErrorMessage is its message.
	Error        bool
	ErrorMessage []byte
	// TextRaw is the answer text (message.content or response), raw JSON
	// string contents; ToolCalls is true for a non-empty
	// message.tool_calls: what Request.KeepText keeps (ollama_tools.go).
	TextRaw   []byte
	ToolCalls bool

	// what message, response and thinking said, each the last of its
	// key, combined into Content and Reasoning at the end
	msgContent, msgThinking, response, thinking bool
	msgText, responseText                       []byte
}

// ScanOllama reads data, one JSON object, into l without allocating, with
// ScanChunk's guarantees.
func ScanOllama(data []byte, l *OllamaLine) error {
	*l = OllamaLine{}
	s := scanner{b: data}
	if err := s.start(); err != nil {
		return err
	}
	k, err := s.nextMember(false)
	for ; k != nil && err == nil; k, err = s.nextMember(true) {
		if err = s.ollamaMember(k, l); err != nil {
			break
		}
	}
	if err != nil {
		return err
	}
	l.Content, l.Reasoning = l.msgContent || l.response, l.msgThinking || l.thinking
	l.TextRaw = l.msgText
	if len(l.responseText) > 0 {
		l.TextRaw = l.responseText
	}
	return s.end()
}

func (s *scanner) ollamaMember(k []byte, l *OllamaLine) error {
	var err error
	switch string(k) {
	case "message":
		err = s.ollamaMessage(l)
	case "response":
		l.responseText, err = s.stringOrSkip()
		l.response = len(l.responseText) > 0
	case "thinking":
		var text []byte
		text, err = s.stringOrSkip()
		l.thinking = len(text) > 0
	case "done":
		l.Done, err = s.boolean()
	case "done_reason":
		l.DoneReason, err = s.stringOrSkip()
	case "prompt_eval_count":
		l.PromptEvalCount, err = s.count()
		l.Counts = true
	case "eval_count":
		l.EvalCount, err = s.count()
		l.Counts = true
	case "total_duration":
		l.TotalNS, err = s.nanos()
	case "load_duration":
		l.LoadNS, err = s.nanos()
	case "prompt_eval_duration":
		l.PromptEvalNS, err = s.nanos()
	case "eval_duration":
		l.EvalNS, err = s.nanos()
	case "error":
		l.Error, l.ErrorMessage, err = s.errorValue()
	default:
		err = s.skip()
	}
	return err
}

// nanos reads one of Ollama's durations, a count of nanoseconds.
func (s *scanner) nanos() (int64, error) {
	n, err := s.count()
	return int64(n), err
}

// ollamaMessage reads a message object into l: whether it carries
// content (text or tool calls) and thinking, its text and its calls.
func (s *scanner) ollamaMessage(l *OllamaLine) error {
	l.msgContent, l.msgThinking, l.msgText, l.ToolCalls = false, false, nil, false
	if s.peek() != '{' {
		return s.skip()
	}
	var thinking []byte
	k, err := s.nextMember(false)
	for ; k != nil && err == nil; k, err = s.nextMember(true) {
		switch string(k) {
		case "content":
			l.msgText, err = s.stringOrSkip()
		case "thinking":
			thinking, err = s.stringOrSkip()
		case "tool_calls":
			l.ToolCalls, err = s.nonEmptyArray()
		default:
			err = s.skip()
		}
		if err != nil {
			break
		}
	}
	l.msgContent, l.msgThinking = len(l.msgText) > 0 || l.ToolCalls, len(thinking) > 0
	return err
}

// readOllamaStream reads an NDJSON reply: one object a line, the last
// with done: true and the request's counts and durations.
func (cl *call) readOllamaStream(resp *http.Response) error {
	lr := cl.c.lines.Get().(*LineReader)
	lr.resetStamped(resp.Body, cl.rx())
	defer cl.c.putLines(lr)
	defer func() { cl.t.BytesIn = lr.BytesRead() }()
	var l OllamaLine
	for {
		line, err := lr.Next()
		switch {
		case err == io.EOF:
			return cl.endWithout("the final object (done: true)", "application/x-ndjson", resp)
		case errors.Is(err, ErrEventTooLarge):
			return cl.tooLarge(err)
		case err != nil:
			return err
		}
		if err := ScanOllama(line.Data, &l); err != nil {
			return cl.malformed(err)
		}
		if cl.req.KeepText > 0 {
			cl.t.keepOllama(&l, line.Data, cl.req.KeepText)
		}
		if err := cl.ollama(&l, arrival{line.At, line.ReadLag, line.Kernel}); err != nil {
			return err
		}
		if l.Done {
			cl.t.SawDone = true
			cl.clock.end(cl.t, arrival{line.At, line.ReadLag, line.Kernel})
			drain[Line](cl, lr)
			return emptyOutput(cl.t)
		}
	}
}

// ollama folds one Ollama object into the trace.
func (cl *call) ollama(l *OllamaLine, a arrival) error {
	if l.Error {
		return &failure{record.ErrStreamErrorEvent, "error in reply: " + decodeJSONString(l.ErrorMessage)}
	}
	if l.Counts {
		cl.t.UsageReported = true
		cl.t.PromptTokens, cl.t.CompletionTokens = l.PromptEvalCount, l.EvalCount
	}
	if l.Done {
		cl.t.Timings = ollamaTimings(l)
		if len(l.DoneReason) > 0 {
			cl.t.FinishReason = finishReason(l.DoneReason)
		}
	}
	if l.Content || l.Reasoning {
		return cl.token(a, !l.Content)
	}
	return nil
}

// ollamaTimings maps the final object's durations onto the server
// timings: prompt_eval_duration is the prefill, eval_duration the decode.
// Ollama reports no queue; load_duration (loading the model) is neither
// and is left out (docs/apis.md).
func ollamaTimings(l *OllamaLine) ServerTimings {
	if l.PromptEvalNS == 0 && l.EvalNS == 0 {
		return ServerTimings{}
	}
	return ServerTimings{Present: true,
		PromptN: l.PromptEvalCount, PromptUS: nsToUS(l.PromptEvalNS),
		PredictedN: l.EvalCount, PredictedUS: nsToUS(l.EvalNS)}
}

// nsToUS rounds nanoseconds to the nearest microsecond.
func nsToUS(ns int64) int64 { return (ns + 500) / 1000 }

// applyOllamaBody checks a whole (stream: false) reply.
func (cl *call) applyOllamaBody(b []byte, a arrival) error {
	var l OllamaLine
	if err := ScanOllama(b, &l); err != nil {
		return &failure{record.ErrMalformedEvent, "reply body: " + err.Error()}
	}
	if cl.req.KeepText > 0 {
		cl.t.keepOllama(&l, b, cl.req.KeepText)
	}
	if err := cl.ollama(&l, a); err != nil {
		return err
	}
	if !l.Done {
		return &failure{record.ErrStreamIncomplete, "reply body is not the final object (no done: true)"}
	}
	return emptyOutput(cl.t)
}

// putLines returns a line reader to the pool unless it grew too large.
func (c *OpenAI) putLines(lr *LineReader) {
	lr.Reset(nil)
	if lr.BufferSize() <= maxPooledReader {
		c.lines.Put(lr)
	}
}
