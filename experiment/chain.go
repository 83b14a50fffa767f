package experiment

import (
	"fmt"
	"maps"

	"github.com/inferload/inferload/engine"
	"github.com/inferload/inferload/plan"
	"github.com/inferload/inferload/protocol"
	"github.com/inferload/inferload/workload"
)

// newChains builds the engine chains of the plan's chain classes, keyed by
// class name; nil when no class has one. Model steps go through client,
// or through a client for the step's own url that shares its settings.
func newChains(p *plan.Plan, client protocol.Client) (map[string]*engine.Chain, error) {
	var out map[string]*engine.Chain
	for _, c := range p.Workload.Classes {
		if len(c.Chain) == 0 {
			continue
		}
		ch, err := newChain(p, &c, client)
		if err != nil {
			return nil, fmt.Errorf("workload.classes %s: chain: %w", c.Name, err)
		}
		if out == nil {
			out = make(map[string]*engine.Chain)
		}
		out[c.Name] = ch
	}
	return out, nil
}

// newChain builds one class's chain.
func newChain(p *plan.Plan, c *plan.Class, client protocol.Client) (*engine.Chain, error) {
	names := plan.ChainStepNames(c.Chain)
	ch := &engine.Chain{Steps: make([]engine.ChainStep, len(c.Chain))}
	for k := range c.Chain {
		s := &c.Chain[k]
		step := engine.ChainStep{Name: names[k]}
		if s.HTTP != nil {
			opts := s.HTTP.Options()
			opts.Secrets = p.Secrets("") // the API key is not sent to an http step
			call, err := protocol.NewHTTPCall(opts)
			if err != nil {
				return nil, fmt.Errorf("step %s: %w", names[k], err)
			}
			step.HTTP = call
		} else {
			cl, err := stepClient(s, client)
			if err != nil {
				return nil, fmt.Errorf("step %s: %w", names[k], err)
			}
			step.Client = cl
			step.Render = stepRenderer(p, c, s)
		}
		ch.Steps[k] = step
	}
	return ch, nil
}

// stepClient is the client of a model step: the run's, or one for the
// step's url.
func stepClient(s *plan.ChainStep, client protocol.Client) (protocol.Client, error) {
	if s.URL == "" {
		return nil, nil // engine uses Config.Client
	}
	oa, ok := client.(*protocol.OpenAI)
	if !ok {
		return nil, fmt.Errorf("url %s needs the OpenAI client", s.URL)
	}
	return oa.WithBaseURL(s.URL)
}

// stepRenderer renders a model step's body: the step's API and model, the
// target's, class's and step's body fields merged in that order.
func stepRenderer(p *plan.Plan, c *plan.Class, s *plan.ChainStep) engine.Renderer {
	api := protocol.API(s.API)
	model := p.Target.Model
	if s.Model != "" {
		model = s.Model
	}
	extra := make(map[string]any, len(p.Target.Body)+len(c.Body)+len(s.Body))
	maps.Copy(extra, p.Target.Body)
	maps.Copy(extra, c.Body)
	maps.Copy(extra, s.Body)
	stream := p.Target.Streams() && api.Streams()
	usage := p.Target.IncludesUsage()
	return func(spec workload.Spec) (*protocol.Request, error) {
		body, err := protocol.OpenAIBody{
			Model: model, Prompt: spec.Prompt, Messages: chatMessages(spec.Messages, spec.Images), Images: images(spec.Images), MaxTokens: spec.MaxTokens,
			Stream: stream, IncludeUsage: usage, IgnoreEOS: spec.IgnoreEOS, Extra: extra,
		}.Render(api)
		if err != nil {
			return nil, err
		}
		return &protocol.Request{API: api, Body: body, Stream: stream, MaxTokens: spec.MaxTokens,
			EventsCap: min(max(spec.MaxTokens, 1), maxEventsCap)}, nil
	}
}
