package plan

import (
	"strings"
	"testing"
)

// The native APIs' needs of the target: the server's root as base URL, a
// model where the path names it, and no mixing with OpenAI APIs.
func TestValidateNativeAPIs(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		change func(p *Plan)
		want   string // "" means valid
	}{
		// TGI at the server's root is valid.
		{"tgi root", func(p *Plan) { p.Target.API, p.Target.URL = "tgi", "http://127.0.0.1:8080" }, ""},
		// An OpenAI base URL given to TGI names the shape to use.
		{"tgi v1", func(p *Plan) { p.Target.API, p.Target.URL = "tgi", "http://127.0.0.1:8080/v1" },
			`target.url: base URL "http://127.0.0.1:8080/v1": the tgi API takes the server's root (e.g. http://127.0.0.1:8080), not a path ending in /v1`},
		// An endpoint's own path is refused too.
		{"ollama api path", func(p *Plan) { p.Target.API, p.Target.URL = "ollama", "http://127.0.0.1:11434/api/chat" }, "not a path ending in /api"},
		// A proxy prefix is fine.
		{"prefix", func(p *Plan) { p.Target.API, p.Target.URL = "ollama", "http://gw.local/ollama" }, ""},
		// Triton's path names the model.
		{"triton no model", func(p *Plan) { p.Target.API, p.Target.URL = "triton", "http://127.0.0.1:8000" },
			"target.model: required by the triton API (target.api)"},
		{"triton model", func(p *Plan) {
			p.Target.API, p.Target.URL, p.Target.Model = "triton", "http://127.0.0.1:8000", "ensemble"
		}, ""},
		// TorchServe's too, also when a class chose it.
		{"torchserve class no model", func(p *Plan) {
			p.Target.URL = "http://127.0.0.1:8080"
			p.Workload.Classes = []Class{{Name: "c", Weight: 1, API: "torchserve"}}
		}, "target.model: required by the torchserve API (workload.classes[0].api)"},
		// One base URL cannot serve chat (/v1) and tgi (root).
		{"mix", func(p *Plan) {
			p.Target.URL = "http://127.0.0.1:8080"
			p.Workload.Classes = []Class{{Name: "a", Weight: 1}, {Name: "b", Weight: 1, API: "tgi"}}
		}, "workload.classes[1].api: tgi is a native API whose base URL is the server's root, but chat (target.api) is an OpenAI API"},
		// When every class overrides target.api, target.api does not count.
		{"all classes native", func(p *Plan) {
			p.Target.URL = "http://127.0.0.1:8080"
			p.Workload.Classes = []Class{{Name: "a", Weight: 1, API: "tgi"}, {Name: "b", Weight: 1, API: "tgi"}}
		}, ""},
	}
	for _, tt := range tests {
		p := closedPlan()
		tt.change(p)
		p.ApplyDefaults()
		err := p.Validate()
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("%s: unexpected error: %v", tt.name, err)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("%s: error %v\nwant it to contain %q", tt.name, err, tt.want)
		}
	}
}
