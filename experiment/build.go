// Package experiment orchestrates a run: it turns a plan into an engine
// phase, streams every result to the run directory as it finishes, and
// writes the summary. It is the only package that knows them all.
package experiment

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"time"

	"github.com/inferload/inferload/engine"
	"github.com/inferload/inferload/internal/inputfile"
	"github.com/inferload/inferload/plan"
	"github.com/inferload/inferload/protocol"
	"github.com/inferload/inferload/record"
	"github.com/inferload/inferload/workload"
)

// Env is the outside world a run may touch, injected so tests and the CLI
// control it.
type Env struct {
	// Getenv reads an environment variable (an API key named by
	// target.api_key_env); nil means an empty environment, never the
	// process's own.
	Getenv func(string) string
	// ReadFile reads a file the plan names (an API key file, a CA
	// certificate); nil means the file itself, read bounded and
	// interruptibly (internal/inputfile). Either way a file past its
	// kind's limit is refused.
	ReadFile func(string) ([]byte, error)

	// ctx stops the reads of the default ReadFile (the run's context:
	// a signal ends them); nil means never.
	ctx context.Context
}

func (e Env) withDefaults() Env {
	if e.Getenv == nil {
		e.Getenv = func(string) string { return "" }
	}
	return e
}

// within is e with its file reads stopped when ctx is done.
func (e Env) within(ctx context.Context) Env {
	e.ctx = ctx
	return e
}

// reader reads files of kind k: the injected ReadFile, or the file
// itself through inputfile, each refused past k's limit.
func (e Env) reader(k inputfile.Kind) func(string) ([]byte, error) {
	return func(path string) ([]byte, error) {
		if e.ReadFile == nil {
			return inputfile.Read(cmp.Or(e.ctx, context.Background()), path, k)
		}
		b, err := e.ReadFile(path)
		if err == nil && int64(len(b)) > k.Limit {
			return nil, &inputfile.TooLargeError{Path: path, Kind: k}
		}
		return b, err
	}
}

// apiKey is the plan's API key, its file (if any) read as e reads files.
func (e Env) apiKey(p *plan.Plan) (string, error) {
	return p.APIKey(e.Getenv, e.reader(inputfile.Key))
}

// closingClient is a protocol client whose connections can be released.
type closingClient interface {
	protocol.Client
	Close()
}

// newClient builds the protocol client the plan's target needs: one for
// target.url, or with replicas one per base URL behind a round-robin
// (protocol.Balanced).
func newClient(p *plan.Plan, env Env) (closingClient, error) {
	if len(p.Target.Replicas) == 0 {
		return newBaseClient(p, env, p.Target.URL)
	}
	clients := make([]protocol.Client, 0, len(p.Target.Replicas)+1)
	for _, base := range p.Target.BaseURLs() {
		c, err := newBaseClient(p, env, base)
		if err != nil {
			protocol.NewBalanced(clients).Close()
			return nil, err
		}
		clients = append(clients, c)
	}
	return protocol.NewBalanced(clients), nil
}

// newBaseClient builds the client of one of the target's base URLs.
func newBaseClient(p *plan.Plan, env Env, base string) (*protocol.OpenAI, error) {
	key, err := env.apiKey(p)
	if err != nil {
		return nil, err
	}
	var caPEM []byte
	if p.Target.CAFile != "" {
		if caPEM, err = env.reader(inputfile.CA)(p.Target.CAFile); err != nil {
			return nil, fmt.Errorf("CA file: %w", err)
		}
	}
	t := p.Target
	var httpOpts *protocol.HTTPAPIOptions
	if p.UsesAPI(protocol.APIHTTP) {
		httpOpts = t.HTTP.Options()
	}
	return protocol.NewOpenAI(protocol.OpenAIOptions{
		Triton:         t.Triton.Tensors(),
		HTTP:           httpOpts,
		BaseURL:        base,
		Model:          t.Model,
		APIKey:         key,
		Headers:        t.Headers,
		Secrets:        p.Secrets(key),
		CAFile:         t.CAFile,
		CAPEM:          caPEM,
		Insecure:       t.Insecure,
		ConnectTimeout: maxConnect(p),
		TTFTTimeout:    t.Timeouts.TTFT,
		TotalTimeout:   t.Timeouts.Total,
		UserClock:      !t.KernelStamps(),
		HTTP2:          t.HTTP2,
		ThinkTags:      t.ThinkTags,
	})
}

// maxConnect is the longest connect timeout of the target and its classes:
// the shared dialer must allow it, and each request whose bound is shorter
// carries its own (classTimeouts).
func maxConnect(p *plan.Plan) time.Duration {
	d := p.Target.Timeouts.Connect
	for _, c := range p.Workload.Classes {
		d = max(d, c.Timeouts.Connect)
	}
	return d
}

// classTimeouts is the per-request timeout override of a class, nil when
// the client's own timeouts apply. Zero fields keep the target's; once
// some class raised the dialer's bound, every request carries its connect
// bound so the target's still holds for the others.
func classTimeouts(p *plan.Plan, ct plan.Timeouts) *protocol.Timeouts {
	raised := maxConnect(p) > p.Target.Timeouts.Connect
	if ct == (plan.Timeouts{}) && !raised {
		return nil
	}
	return &protocol.Timeouts{Connect: cmp.Or(ct.Connect, p.Target.Timeouts.Connect), TTFT: ct.TTFT, Total: ct.Total}
}

// Workload is the requests a run of p sends: its classes, lengths and
// prefixes, with its datasets and tokenizer read as a run reads them
// (ctx bounds the reads). The fleet planner simulates them.
func Workload(ctx context.Context, p *plan.Plan) (*workload.Mix, error) {
	return newSource(p, newWorkloadFiles(ctx))
}

// newSource builds the workload of a plan: its request classes (or the
// single default class) and its bad-input mix.
func newSource(p *plan.Plan, files *workloadFiles) (*workload.Mix, error) {
	cfg, err := p.Workload.MixConfig()
	if err != nil {
		return nil, err
	}
	if err := files.attach(p, &cfg); err != nil {
		return nil, err
	}
	return workload.NewMix(cfg)
}

// maxEventsCap bounds the per-request preallocation of event offsets: a
// bad-input request asking for 2^31 tokens must not reserve 16 GiB.
const maxEventsCap = 1 << 14

// classTarget is how one class's requests are sent: its API and the body
// fields merged over the target's.
type classTarget struct {
	api      protocol.API
	extra    map[string]any
	timeouts *protocol.Timeouts // nil: the client's
}

// classTargets resolves each class's API and extra body fields once.
// Classes that are not listed (default, bad input) use the target's.
func classTargets(p *plan.Plan) map[string]classTarget {
	out := make(map[string]classTarget, len(p.Workload.Classes))
	for _, c := range p.Workload.Classes {
		ct := classTarget{api: protocol.API(p.Target.API), extra: p.Target.Body, timeouts: classTimeouts(p, c.Timeouts)}
		if c.API != "" {
			ct.api = protocol.API(c.API)
		}
		if len(c.Body) > 0 {
			ct.extra = make(map[string]any, len(p.Target.Body)+len(c.Body))
			maps.Copy(ct.extra, p.Target.Body)
			maps.Copy(ct.extra, c.Body)
		}
		out[c.Name] = ct
	}
	return out
}

// newRenderer renders specs into OpenAI request bodies for the plan's
// target, each with its class's API and body fields.
func newRenderer(p *plan.Plan) engine.Renderer {
	def := classTarget{api: protocol.API(p.Target.API), extra: p.Target.Body, timeouts: classTimeouts(p, plan.Timeouts{})}
	classes := classTargets(p)
	stream := p.Target.Streams()
	usage := p.Target.IncludesUsage()
	tmpl, tmplErr := httpTemplate(p)
	// A templated service's replies are tokens only when it says where
	// they are (HTTPAPIOptions.Generates), and it was sent a prompt only
	// when its body has {{prompt}}: an image classifier gets neither
	// token figures nor token warnings.
	httpGenerates := p.Target.HTTP.Options().Generates()
	httpPrompt := tmpl != nil && tmpl.Has(protocol.PromptPlaceholder)
	return func(s workload.Spec) (*protocol.Request, error) {
		ct, ok := classes[s.Class]
		if !ok {
			ct = def
		}
		if ct.api == protocol.APIHTTP && tmplErr != nil {
			return nil, tmplErr
		}
		stream := requestStreams(p, ct.api, stream)
		ob := protocol.OpenAIBody{
			Model: p.Target.Model, Prompt: s.Prompt, Messages: chatMessages(s.Messages, s.Images), Images: images(s.Images), MaxTokens: s.MaxTokens,
			Stream: stream, IncludeUsage: usage, IgnoreEOS: s.IgnoreEOS, Extra: ct.extra,
			ExplicitMaxTokens: s.Expect != "", // bad input sends even a zero, in the API's own field
			Class:             s.Class, InputTokens: s.InputTokens, Template: tmpl, Tensors: p.Target.Triton.Tensors(),
			PreviousResponseID: s.PreviousResponseID, Documents: s.Documents, Audio: s.Audio,
		}
		body, err := ob.Render(ct.api)
		if err != nil {
			return nil, err
		}
		req := &protocol.Request{API: ct.api, Body: body, Stream: stream, MaxTokens: s.MaxTokens,
			EventsCap: min(max(s.MaxTokens, 1), maxEventsCap), Timeouts: ct.timeouts,
			NoTokens: !ob.Generates(ct.api) || (ct.api == protocol.APIHTTP && !httpGenerates),
			// A transcription sends audio, not the prompt: its input
			// tokens are the server's to count.
			NoPrompt:  ct.api == protocol.APIHTTP && !httpPrompt || ct.api == protocol.APITranscriptions,
			Documents: len(s.Documents)}
		if s.Answer != nil {
			req.KeepReply = record.MaxReplyKept
			if p.Target.RevealAnswers { // the simulator's planted drop only: a real server is never told
				req.ExpectAnswer = s.Answer.Expect
			}
		}
		return req, nil
	}
}

// httpTemplate parses target.http.body once (nil without one); the plan
// was validated, so an error here is a plan that skipped validation.
func httpTemplate(p *plan.Plan) (*protocol.Template, error) {
	if p.Target.HTTP.Body == "" {
		return nil, nil
	}
	t, err := protocol.ParseTemplate(p.Target.HTTP.Body, protocol.EscapeJSON)
	if err != nil {
		return nil, fmt.Errorf("target.http.body: %w", err)
	}
	return t, nil
}

// requestStreams is whether a request of api is sent and read as a
// stream: as target.stream says for the APIs that can stream, never for
// those that answer in one body (triton-grpc too when it speaks to a
// tensor model, target.triton.input), and by its response mode for http.
func requestStreams(p *plan.Plan, api protocol.API, stream bool) bool {
	switch {
	case api == protocol.APIHTTP:
		return p.Target.HTTP.Options().Streams()
	case api == protocol.APITritonGRPC && p.Target.Triton.Input != "":
		return false
	}
	return stream && api.Streams()
}

// engineConfig wires a plan into one engine phase, loading its datasets
// and tokenizer through the run's files; its load's shape is built in one
// place, withShape (shape.go).
func engineConfig(p *plan.Plan, client protocol.Client, files *workloadFiles) (engine.Config, error) {
	src, err := newSource(p, files)
	if err != nil {
		return engine.Config{}, err
	}
	l := p.Load
	cfg := engine.Config{
		Client: client, Source: src, Render: newRenderer(p),
		Duration: l.Duration, Requests: l.Requests, Warmup: l.Warmup, Grace: l.Grace,
		Seed: p.Workload.Seed, Retry: retryPolicy(p.Target.Retry),
	}
	if files != nil {
		cfg.Prefixes = files.prefixes
	}
	if cfg.Graphs, err = newGraphs(p, client); err != nil {
		return engine.Config{}, err
	}
	if err := withShape(p, &cfg, files); err != nil {
		return engine.Config{}, err
	}
	return cfg, nil
}

// chatMessages converts a dataset conversation (or a graph call's, with
// tool messages after the prompt) for the protocol; extra (a class's
// synthetic images) joins the prompt, the last user message.
func chatMessages(ms []workload.ChatMessage, extra []workload.Image) []protocol.ChatMessage {
	if len(ms) == 0 {
		return nil
	}
	out := make([]protocol.ChatMessage, len(ms))
	prompt := len(ms) - 1
	for k, m := range ms {
		out[k] = protocol.ChatMessage{Role: m.Role, Content: m.Content, Images: images(m.Images), ToolCallID: m.ToolCallID}
		for _, c := range m.ToolCalls {
			out[k].ToolCalls = append(out[k].ToolCalls, protocol.ReplyToolCall{ID: c.ID, Name: c.Name, Arguments: c.Arguments})
		}
		if m.Role == "user" {
			prompt = k
		}
	}
	out[prompt].Images = append(out[prompt].Images, images(extra)...)
	return out
}

// images converts a spec's images for the protocol.
func images(ims []workload.Image) []protocol.Image {
	if len(ims) == 0 {
		return nil
	}
	out := make([]protocol.Image, len(ims))
	for k, im := range ims {
		out[k] = protocol.Image{URL: im.URL, Detail: im.Detail}
	}
	return out
}

// retryPolicy carries the plan's retry options to the engine, whose
// defaults fill the zero ones.
func retryPolicy(r plan.Retry) engine.RetryPolicy {
	return engine.RetryPolicy{
		MaxAttempts: r.MaxAttempts, InitialBackoff: r.InitialBackoff, MaxBackoff: r.MaxBackoff,
		MaxRetryAfter: r.MaxRetryAfter, BudgetRatio: r.BudgetRatio,
		BudgetMinRetries: r.BudgetMinRetries, BudgetWindow: r.BudgetWindow,
	}
}
