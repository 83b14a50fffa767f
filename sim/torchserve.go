package sim

import (
	"encoding/json"
	"fmt"
	"net/http"
)

// torchServeRequest is the body the simulator's handler reads, as
// TorchServe's LLM example handlers do; any other body is the prompt
// itself.
type torchServeRequest struct {
	Prompt       *string `json:"prompt"`
	MaxNewTokens *int    `json:"max_new_tokens"`
	Stream       bool    `json:"stream"`
}

// parseTorchServe translates a /predictions/{model} body.
func parseTorchServe(model string) func(*http.Request, []byte) (nativeRequest, *apiError) {
	return func(r *http.Request, body []byte) (nativeRequest, *apiError) {
		if m := r.PathValue("model"); m != model {
			return nativeRequest{}, &apiError{status: http.StatusNotFound, typ: "ModelNotFoundException", msg: "Model not found: " + m}
		}
		var t torchServeRequest
		if json.Unmarshal(body, &t) != nil || t.Prompt == nil {
			text := string(body)
			t = torchServeRequest{Prompt: &text}
		}
		req := apiRequest{Prompt: promptJSON(*t.Prompt), MaxTokens: t.MaxNewTokens, Stream: t.Stream}
		return nativeRequest{req: req, api: apiCompletions}, nil
	}
}

// torchServeDialect is a TorchServe LLM handler's replies: the output
// text, streamed as one HTTP chunk per token
// (send_intermediate_predict_response) or whole. The output is opaque, so
// a malformed or missing end cannot be shown, and a failure mid-stream
// cuts the chunked body.
type torchServeDialect struct{}

func newTorchServeDialect(*call) dialect { return torchServeDialect{} }

func (torchServeDialect) contentType() string { return "text/plain; charset=utf-8" }
func (torchServeDialect) holdsLast() bool     { return false }
func (torchServeDialect) start() []byte       { return nil }

func (torchServeDialect) token(_ int, text string, broken bool) []byte {
	if broken {
		return nil
	}
	return []byte(text)
}

func (torchServeDialect) errorEvent(string) []byte     { return nil }
func (torchServeDialect) end(int, string, bool) []byte { return nil }

func (torchServeDialect) whole(h http.Header, text string, _ int) []byte {
	h.Set("Content-Type", "text/plain; charset=utf-8")
	return []byte(text)
}

// errorBody is TorchServe's {"code", "type", "message"}.
func (torchServeDialect) errorBody(e *apiError) []byte {
	typ := e.typ
	switch {
	case typ == "ModelNotFoundException":
	case e.status == http.StatusServiceUnavailable || e.status == http.StatusTooManyRequests:
		typ = "ServiceUnavailableException"
	case e.status >= 400 && e.status < 500:
		typ = "BadRequestException"
	default:
		typ = "InternalServerException"
	}
	b := fmt.Appendf(nil, `{"code":%d,"type":%q,"message":`, e.status, typ)
	return append(appendJSONText(b, e.msg), '}')
}

// torchServePing answers GET /ping.
func (s *Server) torchServePing(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write([]byte(`{"status":"Healthy"}`))
}

// torchServeModel answers the management API's GET /models/{model} (on
// the same port here; TorchServe serves it on its management port).
func (s *Server) torchServeModel(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	if r.PathValue("model") != s.prof.Model {
		w.WriteHeader(http.StatusNotFound)
		_, _ = fmt.Fprintf(w, `{"code":404,"type":"ModelNotFoundException","message":%s}`, jsonString("Model not found: "+r.PathValue("model")))
		return
	}
	_, _ = fmt.Fprintf(w, `[{"modelName":%s,"modelVersion":"1.0","modelUrl":"sim.mar","runtime":"python","minWorkers":1,"maxWorkers":1,"batchSize":%d,"maxBatchDelay":0,"loadedAtStartup":true,"workers":[{"id":"9000","status":"READY","gpu":true}]}]`,
		s.modelJSON, max(s.prof.MaxNumSeqs, 1))
}
