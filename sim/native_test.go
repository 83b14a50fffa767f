package sim

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

// Each native API answers a bad request with its server's status and error
// shape, and a good one in its server's reply shape.
func TestNativeAPIShapes(t *testing.T) {
	t.Parallel()
	srv, root := startTiny(t, Config{})
	model := srv.Profile().Model
	checkRoutes(t, root, []routeCase{
		// TGI: a body without inputs is a validation error.
		{"tgi invalid", "/generate", `{"parameters":{}}`, 422, []string{`"error":"missing field`, `"error_type":"validation"`}},
		// TGI's whole reply, details asked for.
		{"tgi whole", "/generate", `{"inputs":"hi there","parameters":{"max_new_tokens":3,"details":true}}`, 200,
			[]string{`"generated_text":`, `"finish_reason":"length","generated_tokens":3`}},
		// TGI's stream: the final event holds the third token, the text and the details.
		{"tgi stream", "/generate_stream", `{"inputs":"hi there","parameters":{"max_new_tokens":3,"details":true}}`, 200,
			[]string{`"index":1,"token":`, `"index":3,"token":`, `"details":{"finish_reason":"length","generated_tokens":3,"seed":null,"input_length":2}`}},
		// Ollama: an unknown model, in Ollama's shape.
		{"ollama model", "/api/chat", `{"model":"nope","messages":[{"role":"user","content":"hi"}]}`, 404, []string{`{"error":"The model`}},
		// Ollama streams by default and ends with done: true and the durations.
		{"ollama stream", "/api/chat", `{"model":"` + model + `","messages":[{"role":"user","content":"hi"}],"options":{"num_predict":2}}`, 200,
			[]string{`"message":{"role":"assistant","content":`, `"done":false}` + "\n", `"done_reason":"length","done":true`, `"eval_count":2,"eval_duration":`}},
		// Ollama's /api/generate answers with response.
		{"ollama generate", "/api/generate", `{"model":"` + model + `","prompt":"hi","stream":false,"options":{"num_predict":2}}`, 200,
			[]string{`"response":`, `"prompt_eval_count":1`}},
		// Triton: an unknown model is a 400 {"error"}.
		{"triton model", "/v2/models/nope/generate", `{"text_input":"hi"}`, 400, []string{`{"error":"Request for unknown model: 'nope' is not found"}`}},
		// Triton's stream: text_output events, nothing after the last.
		{"triton stream", "/v2/models/" + model + "/generate_stream", `{"text_input":"hi","max_tokens":2,"stream":true}`, 200,
			[]string{`data: {"model_name":`, `"text_output":`}},
		// TorchServe: an unknown model is its 404 shape.
		{"torchserve model", "/predictions/nope", `{"prompt":"hi"}`, 404, []string{`{"code":404,"type":"ModelNotFoundException","message":"Model not found: nope"}`}},
		// TorchServe: any body is the prompt.
		{"torchserve raw", "/predictions/" + model, `just text`, 200, nil},
	})
}

// mustProfile looks up a preset.
func mustProfile(t *testing.T, name string) Profile {
	t.Helper()
	p, err := LookupProfile(name)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// startTiny serves the "tiny" preset (seed 1) with cfg's other settings on
// a free loopback port for the test's duration, and returns the server and
// its root URL (the OpenAI API is under /v1, the native APIs at the root).
func startTiny(t *testing.T, cfg Config) (*Server, string) {
	t.Helper()
	cfg.Profile, cfg.Seed = mustProfile(t, "tiny"), 1
	srv, v1, err := Start(cfg, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	return srv, strings.TrimSuffix(v1, "/v1")
}

// routeCase is one request to a route and what its reply must show.
type routeCase struct {
	name, path, body string
	status           int
	contains         []string // substrings of the reply's body
}

// checkRoutes posts each case's JSON body to root+path and checks the
// reply's status and body.
func checkRoutes(t *testing.T, root string, tests []routeCase) {
	t.Helper()
	for _, tt := range tests {
		resp, err := http.Post(root+tt.path, "application/json", strings.NewReader(tt.body))
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tt.status {
			t.Errorf("%s: HTTP %d, want %d: %s", tt.name, resp.StatusCode, tt.status, b)
		}
		for _, want := range tt.contains {
			if !strings.Contains(string(b), want) {
				t.Errorf("%s: reply lacks %q:\n%s", tt.name, want, b)
			}
		}
	}
}
