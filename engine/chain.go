package engine

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/inferload/inferload/protocol"
	"github.com/inferload/inferload/record"
	"github.com/inferload/inferload/workload"
)

// StepKindHTTP is the ChainStep.Kind of an HTTP (retrieval) step; model
// steps are named after their API.
const StepKindHTTP = "http"

// Chain is what one request of a chain class does: its steps in order,
// each starting when the previous one succeeded (RAG-style: embed the
// question, retrieve context, ask the model with it).
type Chain struct {
	Steps []ChainStep
}

// ChainStep is one call of a chain: a model call (Render set) or an HTTP
// call (HTTP set).
type ChainStep struct {
	// Name labels the step in records and the summary.
	Name string
	// Render builds a model call from the request's spec, whose prompt by
	// then carries the text retrieved by earlier HTTP steps. It runs when
	// the step starts, so its (microseconds of) work is part of the chain.
	Render Renderer
	// Client sends the model call; nil uses Config.Client.
	Client protocol.Client
	// HTTP, when set instead of Render, is sent with the prompt; the text
	// it yields is appended to the prompt of the later steps.
	HTTP *protocol.HTTPCall
}

// kind is the step's record.ChainStep.Kind.
func (s *ChainStep) kind(req *protocol.Request) string {
	if s.HTTP != nil {
		return StepKindHTTP
	}
	if req != nil {
		return string(req.API)
	}
	return "model"
}

func (c *Chain) validate(class string) error {
	if len(c.Steps) == 0 {
		return fmt.Errorf("engine: chain of class %s has no steps", class)
	}
	for k := range c.Steps {
		s := &c.Steps[k]
		if (s.Render == nil) == (s.HTTP == nil) {
			return fmt.Errorf("engine: chain of class %s, step %d: set exactly one of Render or HTTP", class, k+1)
		}
	}
	return nil
}

// validateChains checks every chain of the config.
func (c *Config) validateChains() error {
	var errs []error
	for class, ch := range c.Chains {
		if ch == nil {
			errs = append(errs, fmt.Errorf("engine: chain of class %s is nil", class))
			continue
		}
		errs = append(errs, ch.validate(class))
	}
	return errors.Join(errs...)
}

// RetrievedSeparator joins retrieved text to the prompt it is appended to.
const RetrievedSeparator = "\n\n"

// chainRun is the state of one chain request as its steps run.
type chainRun struct {
	spec  workload.Spec
	first protocol.Trace // the first step's trace: the chain's start
	last  protocol.Trace // the last step run
	req   *protocol.Request
	steps []record.ChainStep
	bytes [2]int64 // out, in over all steps
	// newConn: some step opened a connection (the record's new_conn: a
	// chain whose first step opened the pool's connection and whose last
	// reused it still opened one).
	newConn bool
	// trace is the chain's join key (zero with trace context off): every
	// model call sends it, each as its own span (the step's index in place
	// of the attempt number), so a server's spans of the chain share it.
	trace [16]byte
}

// executeChain runs chain ch for request i and folds its steps into one
// record: the chain's latency runs from the usual origin to the end of its
// last step, its TTFT to the first token of the last step, and the failing
// step's error, if any, is the record's. Retries do not apply to chains.
func (e *Engine) executeChain(ctx context.Context, i uint64, ch *Chain, spec workload.Spec, at arrival) *record.Result {
	run := &chainRun{spec: spec, steps: make([]record.ChainStep, 0, len(ch.Steps))}
	if e.cfg.TraceRun != "" {
		run.trace = e.traceID(i)
	}
	for k := range ch.Steps {
		tr := e.chainStep(ctx, run, &ch.Steps[k])
		if k == 0 {
			run.first = *tr
		}
		run.last = *tr
		if tr.Err != record.ErrNone {
			run.last.ErrMsg = fmt.Sprintf("chain step %d (%s): %s", k+1, ch.Steps[k].Name, tr.ErrMsg)
			break
		}
	}
	return e.chainResult(i, run, at)
}

// chainStep runs one step, appends its record and returns its trace.
func (e *Engine) chainStep(ctx context.Context, run *chainRun, s *ChainStep) *protocol.Trace {
	tr := &protocol.Trace{}
	if s.HTTP != nil {
		f := protocol.TemplateFields{Prompt: run.spec.Prompt, InputTokens: run.spec.InputTokens,
			MaxTokens: run.spec.MaxTokens, Class: run.spec.Class}
		if len(run.spec.Images) > 0 {
			f.Image = run.spec.Images[0].URL
		}
		text := s.HTTP.Do(ctx, f, run.trace, len(run.steps), tr)
		if tr.Err == record.ErrNone && text != "" {
			run.spec = withRetrieved(run.spec, text)
		}
		run.req = nil
	} else {
		e.modelStep(ctx, run, s, tr)
	}
	run.bytes[0] += tr.BytesOut
	run.bytes[1] += tr.BytesIn
	run.newConn = run.newConn || tr.NewConn
	run.steps = append(run.steps, e.stepRecord(s, run.req, tr))
	return tr
}

// modelStep renders and sends a model call.
func (e *Engine) modelStep(ctx context.Context, run *chainRun, s *ChainStep, tr *protocol.Trace) {
	req, err := s.Render(run.spec)
	run.req = req
	if err != nil {
		now := e.clock.Now()
		*tr = protocol.Trace{Start: now, End: now, Err: record.ErrOther, ErrMsg: "rendering: " + err.Error()}
		return
	}
	tr.EventsUS = newEvents(req.EventsCap)
	req.TraceID, req.Attempt = run.trace, len(run.steps)
	client := s.Client
	if client == nil {
		client = e.cfg.Client
	}
	client.Do(ctx, req, tr)
}

// stepRecord describes one step.
func (e *Engine) stepRecord(s *ChainStep, req *protocol.Request, tr *protocol.Trace) record.ChainStep {
	sent := tr.Sent
	if sent.IsZero() {
		sent = tr.Start
	}
	cs := record.ChainStep{Name: s.Name, Kind: s.kind(req), SendUS: e.offset(sent),
		Status: tr.Status, Error: tr.Err, BytesIn: tr.BytesIn}
	cs.DurUS = max(e.offset(tr.End)-cs.SendUS, 0)
	if !tr.FirstToken.IsZero() && req != nil && req.Stream { // a whole reply has no first token of its own
		cs.TTFTUS = e.offset(tr.FirstToken) - cs.SendUS
	}
	if tr.UsageReported {
		cs.InputTokens, cs.OutputTokens = tr.PromptTokens, tr.CompletionTokens
	}
	return cs
}

// chainResult builds the chain's record from its last step's trace, with
// the chain's start (the first step's) as its start: result() then times
// everything from the chain's origin.
func (e *Engine) chainResult(i uint64, run *chainRun, at arrival) *record.Result {
	tr := run.last
	shiftUS := int64(0)
	if !tr.Sent.IsZero() && !run.first.Sent.IsZero() {
		shiftUS = tr.Sent.Sub(run.first.Sent).Microseconds()
	}
	tr.Start, tr.Sent = run.first.Start, run.first.Sent
	for k := range tr.EventsUS {
		tr.EventsUS[k] += shiftUS // events count from the record's send
	}
	if tr.Tail.Dropped > 0 {
		tr.Tail.LastUS += shiftUS // the tail's gaps are shift-free
	}
	req := run.req
	if req == nil {
		req = &protocol.Request{} // the chain ended with (or failed in) an HTTP step
	}
	if run.last.FirstToken.IsZero() || req.API == "" {
		tr.FirstToken = time.Time{} // only a model's first token is the chain's
	}
	r := e.result(i, prepared{spec: run.spec, req: req}, &tr, at)
	r.BytesOut, r.BytesIn = run.bytes[0], run.bytes[1]
	r.NewConn = run.newConn
	r.Chain = run.steps
	if run.trace != ([16]byte{}) {
		r.TraceID = hex.EncodeToString(run.trace[:]) // also when the chain ended in an HTTP step
	}
	return r
}

// withRetrieved appends retrieved text to the spec's prompt (and to the
// last message of a conversation).
func withRetrieved(s workload.Spec, text string) workload.Spec {
	s.Prompt += RetrievedSeparator + text
	if n := len(s.Messages); n > 0 {
		msgs := append([]workload.ChatMessage(nil), s.Messages...)
		msgs[n-1].Content += RetrievedSeparator + text
		s.Messages = msgs
	}
	return s
}

// closeChains releases the HTTP steps' idle connections once the phase is
// over (model steps share the caller's client, which the caller closes).
func (e *Engine) closeChains() {
	for _, ch := range e.cfg.Chains {
		for k := range ch.Steps {
			if h := ch.Steps[k].HTTP; h != nil {
				h.Close()
			}
		}
	}
}
