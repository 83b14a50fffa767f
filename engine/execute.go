package engine

import (
	"context"
	"encoding/hex"
	"time"

	"github.com/inferload/inferload/protocol"
	"github.com/inferload/inferload/record"
)

// arrival is when an open-loop request was due and how late it may start
// before it counts as late; the zero value is a closed-loop request,
// which has no due time (its latency runs from its send).
type arrival struct {
	open      bool
	due       time.Duration // from the phase's start
	lateAfter time.Duration
}

// late reports whether a queue delay of delayUS makes the request late.
func (a arrival) late(delayUS int64) bool {
	return time.Duration(delayUS)*time.Microsecond > a.lateAfter
}

// execute sends one prepared request and describes what happened. renderErr
// is a failure to build the request: it becomes a failed record, not a crash.
func (e *Engine) execute(ctx context.Context, i uint64, p prepared, renderErr error, at arrival) *record.Result {
	e.inFlight.Add(1)
	defer e.inFlight.Add(-1)

	if renderErr != nil {
		now := e.offset(e.clock.Now())
		r := &record.Result{ID: i, Class: p.spec.Class, Expect: p.spec.Expect, SendUS: now,
			Error: record.ErrOther, ErrorMsg: renderErr.Error()}
		r.Turn, r.Session = conversationOf(p.spec)
		return r
	}
	if g := e.graphs[p.spec.Class]; g != nil {
		return e.executeGraph(ctx, i, g, p.spec, at)
	}
	tr := protocol.Trace{EventsUS: newEvents(p.req.EventsCap)}
	if e.cfg.TraceRun != "" {
		p.req.TraceID = e.traceID(i)
	}
	if !e.retry.enabled() {
		e.cfg.Client.Do(ctx, p.req, &tr)
		return e.result(i, p, &tr, at)
	}
	rs := e.doWithRetries(ctx, i, p, &tr)
	return e.retried(e.result(i, p, &tr, at), rs, at)
}

// traceID is request i's join key: the run's trace name and the request's
// run-wide id (TraceIDOf; i itself in a run of one process).
func (e *Engine) traceID(i uint64) [16]byte {
	id := i
	if e.cfg.TraceIDOf != nil {
		id = e.cfg.TraceIDOf(i)
	}
	return record.TraceID(e.cfg.TraceRun, id)
}

// retried moves a record's latency origin, queue delay and warm-up flag
// back to its first attempt, so retries never hide latency, and attaches
// the earlier attempts.
func (e *Engine) retried(r *record.Result, rs *retryOutcome, at arrival) *record.Result {
	r.RetryStop = rs.stop
	if len(rs.attempts) == 0 {
		return r
	}
	shiftUS := r.OriginUS() // the last attempt's origin, before Attempts moves it
	r.Attempts = rs.attempts
	if r.OpenLoop {
		r.QueueDelayUS = max(e.offset(rs.firstStart)-r.IntendedUS, 0)
		r.Late = at.late(r.QueueDelayUS)
		return r // the origin already is the intended time
	}
	shiftUS -= r.OriginUS()
	r.E2EUS += shiftUS
	if r.TTFTUS > 0 {
		r.TTFTUS += shiftUS
	}
	r.Warmup = r.OriginUS() < e.cfg.Warmup.Microseconds()
	return r
}

// result converts a trace into a record, applying the measurement contract:
// open-loop latencies count from the intended time, closed-loop ones from the
// send time; the gap between intended and actual start is the queue delay.
func (e *Engine) result(i uint64, p prepared, tr *protocol.Trace, at arrival) *record.Result {
	sent := tr.Sent
	if sent.IsZero() {
		sent = tr.Start // never got a connection: latency runs from the attempt
	}
	promptSent := p.spec.InputTokens
	if p.req.NoPrompt {
		promptSent = 0
	}
	r := &record.Result{
		ID:               i,
		Class:            p.spec.Class,
		Expect:           p.spec.Expect,
		SendUS:           e.offset(sent),
		EventsUS:         tr.EventsUS,
		Stream:           p.req.Stream,
		PromptTokensSent: promptSent,
		ReuseTokens:      p.spec.ReuseTokens,
		MaxTokens:        p.spec.MaxTokens,
		IgnoreEOS:        p.spec.IgnoreEOS,
		FinishReason:     tr.FinishReason,
		ResponseID:       tr.ResponseID,
		Status:           tr.Status,
		Error:            tr.Err,
		ErrorMsg:         tr.ErrMsg,
		BytesOut:         tr.BytesOut,
		BytesIn:          tr.BytesIn,
		Proto:            tr.Proto,
		NewConn:          tr.NewConn,
		Replica:          tr.Replica,
	}
	r.Turn, r.Session = conversationOf(p.spec)
	if im, ok := p.spec.LargestImage(); ok {
		r.Images, r.ImageSize = p.spec.ImageCount(), im.SizeLabel()
	}
	originUS := r.SendUS
	if at.open {
		r.OpenLoop = true
		r.IntendedUS = at.due.Microseconds()
		originUS = r.IntendedUS
		r.QueueDelayUS = max(e.offset(tr.Start)-r.IntendedUS, 0)
		r.Late = at.late(r.QueueDelayUS)
	}
	r.Warmup = originUS < e.cfg.Warmup.Microseconds()
	if !tr.FirstToken.IsZero() {
		r.TTFTUS = e.offset(tr.FirstToken) - originUS
		fillChannels(r, tr)
	}
	if tr.Clock == protocol.ClockKernel {
		r.Clock = record.ClockKernel
		r.ReadLagUS = tr.ReadLag.Microseconds()
	}
	r.E2EUS = e.offset(tr.End) - originUS
	if p.req.TraceID != ([16]byte{}) {
		r.TraceID = hex.EncodeToString(p.req.TraceID[:])
	}
	r.CachedTokens = tr.CachedTokens
	if tm := tr.Timings; tm.Present {
		r.Server = &record.ServerTime{PrefillUS: tm.PromptUS, PromptN: tm.PromptN,
			DecodeUS: tm.PredictedUS, DecodeN: tm.PredictedN, QueueUS: tm.QueueUS, HasQueue: tm.HasQueue,
			InferenceUS: tm.InferenceUS}
		if r.CachedTokens == 0 {
			r.CachedTokens = cachedFromTimings(tm, tr.PromptTokens)
		}
	}
	if tr.Tail.Dropped > 0 {
		tail := tr.Tail
		r.EventsTail = &tail
	}
	generates := p.req.Generates()
	if !generates || !p.req.API.TakesMaxTokens() {
		// No tokens were asked for, or no bound on them was sent (a
		// transcription's audio decides its length): the length checks
		// do not apply.
		r.MaxTokens, r.IgnoreEOS = 0, false
	}
	if !p.req.API.TakesIgnoreEOS() {
		r.IgnoreEOS = false // not sent: the output length is the model's
	}
	fillTokens(r, tr, generates)
	gradeReply(r, p.spec.Answer, tr)
	threadReply(r, p, tr)
	return r
}

// cachedFromTimings is the prompt tokens a server's timings say its cache
// served: cache_n where it sends one; else, where it counts the prompt
// tokens it evaluated (prompt_n, cached ones excluded) below the prompt
// its usage reports, the difference. llama.cpp before cache_n (b4747, the
// engine the tests run) says so only that way: a prompt it holds whole
// in a slot's cache is evaluated from its last token (prompt_n 1).
func cachedFromTimings(tm protocol.ServerTimings, promptTokens int) int {
	if tm.CacheN > 0 {
		return tm.CacheN
	}
	if tm.PromptN > 0 && promptTokens > tm.PromptN {
		return promptTokens - tm.PromptN
	}
	return 0
}

// fillChannels sets a reply's per-channel times when it reasoned
// (record/reasoning.go). They count from the latency origin as TTFT does:
// TTFT plus the event's offset past the first event's, read from the kept
// offsets (on the record's final clock) or, for an event past them, from
// its stamp on arrival.
func fillChannels(r *record.Result, tr *protocol.Trace) {
	if tr.ReasoningEvents == 0 || len(tr.EventsUS) == 0 {
		return
	}
	since := func(pos int, stampUS int64) int64 {
		if pos <= len(tr.EventsUS) {
			stampUS = tr.EventsUS[pos-1]
		}
		return r.TTFTUS + stampUS - tr.EventsUS[0]
	}
	r.ReasoningEvents, r.ChannelsInterleaved = tr.ReasoningEvents, tr.Interleaved
	r.TTFRUS = since(tr.FirstReasoning, tr.FirstReasoningUS)
	if tr.FirstAnswer > 0 {
		r.TTFOUS = since(tr.FirstAnswer, tr.FirstAnswerUS)
	}
}

// newEvents preallocates a trace's event offsets for a reply of about hint
// events, never more than a trace keeps.
func newEvents(hint int) []int64 {
	return make([]int64, 0, min(max(hint, 1), record.MaxEventsKept))
}

// fillTokens prefers the server's usage over our own count, and says which.
// A reply that is not generated text (generates false) without usage has
// none (record.TokensNone): there was nothing to count.
func fillTokens(r *record.Result, tr *protocol.Trace, generates bool) {
	r.InputTokens = r.PromptTokensSent
	switch {
	case !tr.UsageReported || tr.PromptTokens == 0:
	case record.PlausiblePrompt(tr.PromptTokens, r.PromptTokensSent):
		r.InputTokens = tr.PromptTokens
	default:
		// As for the output below: kept beside the record, never summed.
		r.UsageImplausible, r.UsageInputTokens = true, tr.PromptTokens
	}
	if !generates {
		r.TokenSource = record.TokensNone
		if tr.UsageReported {
			r.TokenSource = record.TokensUsage // embeddings' prompt_tokens: the input is the figure
		}
		return
	}
	if tr.UsageReported && record.PlausibleUsage(tr.CompletionTokens, tr.ContentEvents, r.MaxTokens) {
		r.TokenSource = record.TokensUsage
		r.OutputTokens = tr.CompletionTokens
		r.ReasoningTokens = tr.ReasoningTokens
		return
	}
	if tr.UsageReported {
		// A count the reply cannot have (2147483647 beside 2 events, 0
		// beside a streamed answer) would poison every token figure: keep
		// it beside the record, use what was counted.
		r.UsageImplausible, r.UsageOutputTokens = true, tr.CompletionTokens
	}
	r.TokenSource = record.TokensCounted
	r.OutputTokens = tr.ContentEvents
	r.ReasoningTokens = tr.ReasoningEvents
}
