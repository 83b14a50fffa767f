// Package experiment orchestrates a run: it turns a plan into an engine
// phase, streams every result to the run directory as it finishes, and
// writes the summary. It is the only package that knows them all.
package experiment

import (
	"fmt"
	"os"

	"github.com/inferload/inferload/engine"
	"github.com/inferload/inferload/plan"
	"github.com/inferload/inferload/protocol"
	"github.com/inferload/inferload/schedule"
	"github.com/inferload/inferload/workload"
)

// Env is the outside world a run may touch, injected so tests and the CLI
// control it.
type Env struct {
	Getenv   func(string) string
	ReadFile func(string) ([]byte, error)
}

func (e Env) withDefaults() Env {
	if e.Getenv == nil {
		e.Getenv = os.Getenv
	}
	if e.ReadFile == nil {
		e.ReadFile = os.ReadFile
	}
	return e
}

// newClient builds the protocol client the plan's target needs.
func newClient(p *plan.Plan, env Env) (*protocol.OpenAI, error) {
	key, err := p.APIKey(env.Getenv, env.ReadFile)
	if err != nil {
		return nil, err
	}
	t := p.Target
	return protocol.NewOpenAI(protocol.OpenAIOptions{
		BaseURL:        t.URL,
		APIKey:         key,
		Headers:        t.Headers,
		CAFile:         t.CAFile,
		Insecure:       t.Insecure,
		ConnectTimeout: t.Timeouts.Connect,
		TTFTTimeout:    t.Timeouts.TTFT,
		TotalTimeout:   t.Timeouts.Total,
	})
}

// newSource builds the workload generator of a plan.
func newSource(p *plan.Plan) (*workload.Generator, error) {
	in, err := workload.ParseDist(p.Workload.InputTokens)
	if err != nil {
		return nil, fmt.Errorf("workload.input_tokens: %w", err)
	}
	out, err := workload.ParseDist(p.Workload.OutputTokens)
	if err != nil {
		return nil, fmt.Errorf("workload.output_tokens: %w", err)
	}
	return workload.NewGenerator(workload.GeneratorConfig{
		Seed: p.Workload.Seed, Input: in, Output: out, IgnoreEOS: boolOr(p.Workload.IgnoreEOS, true),
	})
}

// newRenderer renders specs into OpenAI request bodies for the plan's target.
func newRenderer(p *plan.Plan) engine.Renderer {
	api := protocol.API(p.Target.API)
	stream := boolOr(p.Target.Stream, true)
	usage := boolOr(p.Target.IncludeUsage, true)
	return func(s workload.Spec) (*protocol.Request, error) {
		body, err := protocol.OpenAIBody{
			Model: p.Target.Model, Prompt: s.Prompt, MaxTokens: s.MaxTokens,
			Stream: stream, IncludeUsage: usage, IgnoreEOS: s.IgnoreEOS, Extra: p.Target.Body,
		}.Render(api)
		if err != nil {
			return nil, err
		}
		return &protocol.Request{API: api, Body: body, Stream: stream, MaxTokens: s.MaxTokens, EventsCap: s.MaxTokens}, nil
	}
}

// engineConfig wires a plan into one engine phase.
func engineConfig(p *plan.Plan, client protocol.Client) (engine.Config, error) {
	src, err := newSource(p)
	if err != nil {
		return engine.Config{}, err
	}
	l := p.Load
	cfg := engine.Config{
		Client: client, Source: src, Render: newRenderer(p),
		Duration: l.Duration, Requests: l.Requests, Warmup: l.Warmup, Grace: l.Grace,
		Seed: p.Workload.Seed, LateAfter: l.LateAfter, MaxInFlight: l.MaxInFlight,
	}
	if l.Rate > 0 {
		arr, err := schedule.NewArrivals(l.Arrival, l.Rate, l.Burstiness, p.Workload.Seed)
		if err != nil {
			return engine.Config{}, fmt.Errorf("load.arrival: %w", err)
		}
		cfg.Arrivals = arr
		return cfg, nil
	}
	cfg.Concurrency = l.Concurrency
	think, err := schedule.ParseThinkTime(l.ThinkTime)
	if err != nil {
		return engine.Config{}, fmt.Errorf("load.think_time: %w", err)
	}
	if !think.IsZero() {
		cfg.Think = think
	}
	return cfg, nil
}

func boolOr(b *bool, def bool) bool {
	if b == nil {
		return def
	}
	return *b
}
