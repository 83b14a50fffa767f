package protocol

import (
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/inferload/inferload/record"
)

func TestCheckAPIURL(t *testing.T) {
	t.Parallel()
	tests := []struct {
		api  API
		url  string
		want string // "" means accepted
	}{
		// The OpenAI APIs take any base, /v1 included.
		{APIChat, "http://h:8000/v1", ""},
		// A native API takes the root.
		{APITGI, "http://h:8080", ""},
		{APITGI, "http://h:8080/", ""},
		// A gateway's prefix is not an endpoint path.
		{APIOllama, "http://gw/ollama", ""},
		// An OpenAI base given to a native API.
		{APITGI, "http://h:8080/v1", "the tgi API takes the server's root (e.g. http://127.0.0.1:8080), not a path ending in /v1"},
		{APITGI, "http://h:8080/v1/", "not a path ending in /v1"},
		// The endpoint's own path.
		{APITGI, "http://h:8080/generate", "not a path ending in /generate"},
		{APITriton, "http://h:8000/v2/models/m", "not a path ending in /v2"},
		{APITorchServe, "http://h:8080/predictions", "not a path ending in /predictions"},
		// The base URL's own rules still hold.
		{APIOllama, "h:11434", "scheme must be http or https"},
	}
	for _, tt := range tests {
		err := CheckAPIURL(tt.api, tt.url)
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("%s %s: %v", tt.api, tt.url, err)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("%s %s: %v, want %q", tt.api, tt.url, err, tt.want)
		}
	}
}

// A request the client cannot route fails at once, saying why, with
// nothing sent.
func TestRouteRefusals(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(nil)
	defer srv.Close()
	c := newClient(t, srv.URL, nil) // no model
	for api, want := range map[API]string{
		APITriton:      "API triton needs the model's name in its path: set target.model",
		APITorchServe:  "API torchserve needs the model's name in its path",
		APITritonInfer: "API triton-infer needs the model's name in its path",
		APIHTTP:        "API http needs its request template: set target.http",
		"grpc":         `API "grpc" is not spoken by this client (want chat, completions, embeddings, images, responses, messages, rerank, score, transcriptions, realtime, tgi, ollama, ollama-generate, triton, torchserve, pooling, triton-infer, triton-grpc or http)`,
	} {
		tr := doTrace(t, c, &Request{API: api, Body: []byte("{}")})
		if tr.Err != record.ErrOther || !strings.Contains(tr.ErrMsg, want) || !tr.Sent.IsZero() {
			t.Errorf("%s: %s %q sent %v, want other %q", api, tr.Err, tr.ErrMsg, !tr.Sent.IsZero(), want)
		}
	}
}
