package plan

import (
	"bytes"
	"slices"
	"strings"
	"testing"
)

// ragClass is a valid chain class: embeddings, a vector search, chat.
func ragClass() Class {
	return Class{Name: "rag", Weight: 1, Chain: []ChainStep{
		{API: "embeddings"},
		{HTTP: &HTTPStep{URL: "http://127.0.0.1:6333/search", Body: `{"q":"{{prompt}}"}`, Extract: "hits.*.text"}},
		{API: "chat"},
	}}
}

// TestValidateChain: chain mistakes are caught before any request, each
// at its own path.
func TestValidateChain(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		change func(c *Class)
		want   string // "" means valid
	}{
		// Embeddings, retrieval, chat is valid.
		{"ok", func(*Class) {}, ""},
		// A step is a model call or an HTTP call, not both.
		{"both", func(c *Class) { c.Chain[0].HTTP = &HTTPStep{URL: "http://h/x"} }, "chain[0]: set exactly one of api"},
		// ... and not neither.
		{"neither", func(c *Class) { c.Chain[2].API = "" }, "chain[2]: set exactly one of api"},
		// Unknown APIs are refused.
		{"bad api", func(c *Class) { c.Chain[0].API = "rerank" }, `chain[0].api: "rerank" is not a chain step's API`},
		// A relative retrieval URL cannot be sent.
		{"relative url", func(c *Class) { c.Chain[1].HTTP.URL = "/search" }, "chain[1].http: http call: url"},
		// A malformed extract path.
		{"bad extract", func(c *Class) { c.Chain[1].HTTP.Extract = "a..b" }, "chain[1].http: http call: extract path"},
		// Only GET, POST and PUT.
		{"bad method", func(c *Class) { c.Chain[1].HTTP.Method = "DELETE" }, `chain[1].http.method: "DELETE"`},
		// Model-step fields on an HTTP step would do nothing.
		{"model on http", func(c *Class) { c.Chain[1].Model = "m" }, "chain[1]: url, model and body belong to model steps"},
		// A step's own server must be a URL.
		{"bad step url", func(c *Class) { c.Chain[0].URL = "ftp://h" }, "chain[0].url:"},
		// A chain without a model call tests nothing of the target.
		{"no model", func(c *Class) { c.Chain = c.Chain[1:2] }, "chain: needs at least one model step"},
		// The class's api is replaced by the steps'.
		{"class api", func(c *Class) { c.API = "chat" }, "workload.classes[0].api: has no effect with a chain"},
		// Step names label report rows.
		{"bad name", func(c *Class) { c.Chain[0].Name = "a b" }, `chain[0].name: "a b"`},
		// Too many steps.
		{"too long", func(c *Class) {
			for range 8 {
				c.Chain = append(c.Chain, ChainStep{API: "chat"})
			}
		}, "chain: 11 steps: at most 8"},
	}
	for _, tt := range tests {
		p := closedPlan()
		c := ragClass()
		tt.change(&c)
		p.Workload.Classes = []Class{c}
		p.ApplyDefaults()
		err := p.Validate()
		if tt.want == "" {
			if err != nil {
				t.Errorf("%s: %v", tt.name, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: error %v, want %q", tt.name, err, tt.want)
		}
	}
}

// TestChainStepNames: defaults come from the step's kind and repeats get
// a suffix, so every step has its own row.
func TestChainStepNames(t *testing.T) {
	t.Parallel()
	steps := []ChainStep{{API: "chat"}, {HTTP: &HTTPStep{}}, {API: "chat"}, {Name: "final", API: "chat"}, {HTTP: &HTTPStep{}}}
	want := []string{"chat", "retrieve", "chat-2", "final", "retrieve-2"}
	if got := ChainStepNames(steps); !slices.Equal(got, want) {
		t.Errorf("names %v, want %v", got, want)
	}
}

// TestChainRoundTripRedacted: a chain survives plan.yaml, except a secret
// header of the retrieval call, which is redacted.
func TestChainRoundTripRedacted(t *testing.T) {
	t.Parallel()
	src := `
target: {url: "http://127.0.0.1:8000/v1"}
load: {concurrency: 1}
workload:
  classes:
    - name: rag
      weight: 1
      chain:
        - {api: embeddings, model: e5}
        - http: {url: "http://127.0.0.1:6333/s?q={{prompt}}", headers: {api-key: s3cret}, timeout: 2s}
        - {api: chat}
`
	p, err := Parse("plan.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	out, err := p.Redacted()
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(out, []byte("s3cret")) || p.Workload.Classes[0].Chain[1].HTTP.Headers["api-key"] != "s3cret" {
		t.Errorf("redaction leaked or changed the plan:\n%s", out)
	}
	back, err := Parse("plan.yaml", out)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	ch := back.Workload.Classes[0].Chain
	if len(ch) != 3 || ch[0].Model != "e5" || ch[1].HTTP.Timeout.Seconds() != 2 || ch[2].API != "chat" {
		t.Errorf("round trip %+v", ch)
	}
}
