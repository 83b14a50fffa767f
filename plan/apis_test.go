package plan

import (
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
		// triton-infer's path names the model; target.triton is optional.
		{"triton-infer no model", func(p *Plan) { p.Target.API, p.Target.URL = "triton-infer", "http://127.0.0.1:8000" },
			"target.model: required by the triton-infer API (target.api)"},
		{"triton-infer", func(p *Plan) {
			p.Target.API, p.Target.URL, p.Target.Model = "triton-infer", "http://127.0.0.1:8000", "bert"
			p.Target.Triton = TritonTensors{Input: "INPUT_TEXT", Output: "LOGITS"}
		}, ""},
		// http takes any base URL, /v1 included, and a body template.
		{"http", func(p *Plan) {
			p.Target.API, p.Target.URL = "http", "http://127.0.0.1:9000/v1"
			p.Target.HTTP = HTTPAPI{Path: "/classify", Body: `{"text":"{{prompt}}"}`, Response: "sse", Text: "label"}
		}, ""},
		// A GET needs no body.
		{"http get", func(p *Plan) {
			p.Target.API, p.Target.URL, p.Target.HTTP = "http", "http://127.0.0.1:9000", HTTPAPI{Method: "GET", Response: "none"}
		}, ""},
		// A POST does.
		{"http no body", func(p *Plan) { p.Target.API, p.Target.URL = "http", "http://127.0.0.1:9000" },
			`target.http.body: required with method POST`},
		// A mistyped placeholder.
		{"http placeholder", func(p *Plan) {
			p.Target.API, p.Target.URL, p.Target.HTTP.Body = "http", "http://127.0.0.1:9000", `{"t":"{{promt}}"}`
		}, `target.http.body: template: unknown placeholder {{promt}}`},
		// A response mode that does not exist.
		{"http response", func(p *Plan) {
			p.Target.API, p.Target.URL, p.Target.HTTP = "http", "http://127.0.0.1:9000", HTTPAPI{Body: "x", Response: "grpc"}
		}, `target.http: http API: response "grpc": want none, json, sse, ndjson, chunked`},
		// A bad dot path names its field.
		{"http path", func(p *Plan) {
			p.Target.API, p.Target.URL, p.Target.HTTP = "http", "http://127.0.0.1:9000", HTTPAPI{Body: "x", Tokens: "usage..n"}
		}, `target.http: http API: tokens: extract path "usage..n": empty part`},
		// target.http without the http API is a mistake.
		{"http unused", func(p *Plan) { p.Target.HTTP.Path = "/x" },
			"target.http: is set but no request uses the http API"},
		// A class may use http while the target is chat... but not on one base URL.
		{"http class mix", func(p *Plan) {
			p.Target.URL, p.Target.HTTP.Body = "http://127.0.0.1:8080", "x"
			p.Workload.Classes = []Class{{Name: "a", Weight: 1}, {Name: "b", Weight: 1, API: "http"}}
		}, "http is a native API whose base URL is the server's root"},
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
		checkValidate(t, tt.name, p, tt.want)
	}
}
