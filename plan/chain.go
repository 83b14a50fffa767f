package plan

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/inferload/inferload/protocol"
)

// maxChainSteps bounds workload.classes[].chain: each step is a column of
// the report and a call per request.
const maxChainSteps = 8

// ChainStep is one call of a chain class (workload.classes[].chain): a
// model call (api set) or an HTTP call (http set), run in order for each
// of the class's requests.
type ChainStep struct {
	// Name labels the step in records and the summary (default: its api,
	// or "retrieve" for an http step; repeated names get "-2", "-3", ...).
	Name string `yaml:"name"`
	// API is chat, completions, embeddings, messages or ollama.
	API string `yaml:"api"`
	// URL is another OpenAI-compatible base URL for this step (default
	// target.url), e.g. a separate embeddings server.
	URL string `yaml:"url"`
	// Model overrides target.model for this step.
	Model string `yaml:"model"`
	// Body fields are merged over the class's body for this step.
	Body map[string]any `yaml:"body"`
	// HTTP makes the step a templated HTTP call, e.g. a vector search.
	HTTP *HTTPStep `yaml:"http"`
}

// HTTPStep is a templated HTTP call whose reply text is appended to the
// prompt of the chain's later steps.
type HTTPStep struct {
	// Method is GET, POST, ... (default GET, or POST with a body).
	Method string `yaml:"method"`
	// URL is absolute; {{prompt}} in it is replaced, query-escaped.
	URL string `yaml:"url"`
	// Headers are sent with the call.
	Headers map[string]string `yaml:"headers"`
	// Body is the request body; {{prompt}} in it is replaced, JSON-escaped.
	Body string `yaml:"body"`
	// Extract picks the appended text from a JSON reply, e.g.
	// "results.*.text" (default: the whole body).
	Extract string `yaml:"extract"`
	// Timeout bounds the call (default 30s).
	Timeout time.Duration `yaml:"timeout"`
}

// StepName is the step's name with its default applied (before making
// repeated names unique).
func (s *ChainStep) StepName() string {
	switch {
	case s.Name != "":
		return s.Name
	case s.HTTP != nil:
		return "retrieve"
	}
	return s.API
}

// ChainStepNames returns the steps' names, repeated ones suffixed "-2",
// "-3", ... so every step of a chain has its own row.
func ChainStepNames(steps []ChainStep) []string {
	out := make([]string, len(steps))
	seen := map[string]int{}
	for k := range steps {
		name := steps[k].StepName()
		seen[name]++
		if n := seen[name]; n > 1 {
			name = fmt.Sprintf("%s-%d", name, n)
		}
		out[k] = name
	}
	return out
}

// chain checks a class's chain.
func (v *validator) chain(path string, c *Class) {
	if len(c.Chain) == 0 {
		return
	}
	path += ".chain"
	if len(c.Chain) > maxChainSteps {
		v.fail(path, "%d steps: at most %d", len(c.Chain), maxChainSteps)
	}
	if c.API != "" {
		v.fail(strings.TrimSuffix(path, ".chain")+".api", "has no effect with a chain: set api in each step")
	}
	if c.Turns > 1 {
		v.fail(path, "a chain cannot also be a multi-turn conversation (turns)")
	}
	models := 0
	for k := range c.Chain {
		if v.chainStep(fmt.Sprintf("%s[%d]", path, k), &c.Chain[k]) {
			models++
		}
	}
	if models == 0 {
		v.fail(path, "needs at least one model step (api)")
	}
}

// chainStep checks one step and reports whether it is a model step.
func (v *validator) chainStep(path string, s *ChainStep) bool {
	if s.Name != "" && !classNameRe.MatchString(s.Name) {
		v.fail(path+".name", "%q: want 1-40 letters, digits, '.', '_' or '-'", s.Name)
	}
	if (s.API == "") == (s.HTTP == nil) {
		v.fail(path, "set exactly one of api (a model call) or http (an HTTP call)")
		return false
	}
	if s.HTTP != nil {
		if s.URL != "" || s.Model != "" || s.Body != nil {
			v.fail(path, "url, model and body belong to model steps; an http step has http.url and http.body")
		}
		v.httpStep(path+".http", s.HTTP)
		return false
	}
	if !stepAPI(s.API) {
		v.fail(path+".api", "%q is not a chain step's API: want chat, completions, embeddings, messages or ollama", s.API)
	}
	if s.URL != "" {
		if err := protocol.CheckBaseURL(s.URL); err != nil {
			v.fail(path+".url", "%v", err)
		}
	}
	if _, err := json.Marshal(s.Body); err != nil {
		v.fail(path+".body", "cannot be sent as JSON: %v", err)
	}
	return true
}

// httpMethods are the methods an http step may use.
var httpMethods = []string{"GET", "POST", "PUT"}

// httpStep checks an http step as protocol.NewHTTPCall would, without
// building it (plan builds no clients).
func (v *validator) httpStep(path string, h *HTTPStep) {
	if h.Method != "" && !slices.Contains(httpMethods, strings.ToUpper(h.Method)) {
		v.fail(path+".method", "%q: want GET, POST or PUT", h.Method)
	}
	if err := h.Options().Validate(); err != nil {
		v.fail(path, "%v", err)
	}
}

// Options converts the step for protocol.NewHTTPCall.
func (h *HTTPStep) Options() protocol.HTTPCallOptions {
	return protocol.HTTPCallOptions{Method: h.Method, URL: h.URL, Headers: h.Headers,
		Body: h.Body, Extract: h.Extract, Timeout: h.Timeout}
}

// redactChain copies a chain, hiding secret-looking headers and body
// fields (a vector database's API key) from plan.yaml.
func redactChain(steps []ChainStep) []ChainStep {
	if steps == nil {
		return nil
	}
	out := slices.Clone(steps)
	for k := range out {
		if out[k].Body != nil {
			out[k].Body = redactBody(out[k].Body).(map[string]any)
		}
		if h := out[k].HTTP; h != nil {
			c := *h
			c.Headers = redactHeaders(h.Headers)
			out[k].HTTP = &c
		}
	}
	return out
}
