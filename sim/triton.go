package sim

import (
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/inferload/inferload/internal/tritonpb"
)

// tritonRequest is the part of a generate-extension body the simulator
// honours: the TensorRT-LLM ensemble's inputs, at the top level or in
// parameters.
type tritonRequest struct {
	TextInput  *string `json:"text_input"`
	MaxTokens  *int    `json:"max_tokens"`
	Parameters struct {
		MaxTokens *int `json:"max_tokens"`
	} `json:"parameters"`
}

// decodeTriton checks the path's model and decodes a v2 request body into
// v, refusing either as Triton does (400 {"error"}), for /generate and
// /infer alike.
func decodeTriton(r *http.Request, body []byte, model string, v any) *apiError {
	if m := r.PathValue("model"); m != model {
		return &apiError{status: http.StatusBadRequest, msg: unknownModel(m)}
	}
	if err := json.Unmarshal(body, v); err != nil {
		return badRequest("", "failed to parse the request JSON buffer: %v", err)
	}
	return nil
}

// parseTriton translates a /v2/models/{model}/generate[_stream] body.
func parseTriton(stream bool, model string) func(*http.Request, []byte) (nativeRequest, *apiError) {
	return func(r *http.Request, body []byte) (nativeRequest, *apiError) {
		var t tritonRequest
		if aerr := decodeTriton(r, body, model, &t); aerr != nil {
			return nativeRequest{}, aerr
		}
		if t.TextInput == nil {
			return nativeRequest{}, badRequest("text_input", "expected 'text_input' in the request")
		}
		req := apiRequest{Prompt: promptJSON(*t.TextInput), MaxTokens: t.MaxTokens, Stream: stream}
		if req.MaxTokens == nil {
			req.MaxTokens = t.Parameters.MaxTokens
		}
		return nativeRequest{req: req, api: apiCompletions}, nil
	}
}

// tritonDialect is the generate extension's replies: one SSE data event
// per response, no end marker; errors as {"error": "..."}.
type tritonDialect struct {
	c    *call
	head []byte // `data: {"model_name":…,…,"text_output":`
	buf  []byte
}

func newTritonDialect(c *call) dialect {
	head := fmt.Appendf(nil, `data: {"model_name":%s,"model_version":"1","sequence_end":false,"sequence_id":0,"sequence_start":false,"text_output":`, c.s.modelJSON)
	return &tritonDialect{c: c, head: head, buf: make([]byte, 0, 256)}
}

func (d *tritonDialect) contentType() string { return "text/event-stream; charset=utf-8" }
func (d *tritonDialect) holdsLast() bool     { return false }
func (d *tritonDialect) start() []byte       { return nil }

func (d *tritonDialect) token(_ int, text string, broken bool) []byte {
	b := appendJSONText(append(d.buf[:0], d.head...), text)
	if !broken {
		b = append(b, '}')
	}
	d.buf = append(b, "\n\n"...)
	return d.buf
}

func (d *tritonDialect) errorEvent(msg string) []byte {
	return append(appendJSONText([]byte(`data: {"error":`), msg), "}\n\n"...)
}

// end writes nothing: the extension's stream just ends, so missing_done
// has nothing to leave out.
func (d *tritonDialect) end(int, string, bool) []byte { return nil }

func (d *tritonDialect) whole(h http.Header, text string, _ int) []byte {
	h.Set("Content-Type", "application/json")
	b := append([]byte(nil), d.head[len("data: "):]...)
	return append(appendJSONText(b, text), '}')
}

// errorBody is the extension's {"error": "..."}.
func (d *tritonDialect) errorBody(e *apiError) []byte {
	return append(appendJSONText([]byte(`{"error":`), e.msg), '}')
}

// tritonServer answers GET /v2: the server's metadata.
func (s *Server) tritonServer(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	_, _ = fmt.Fprintf(w, `{"name":"triton","version":%q,"extensions":["classification","sequence","model_repository","schedule_policy","model_configuration","binary_tensor_data","parameters","statistics","trace","logging","generate"]}`, Version)
}

// tritonTensor is one tensor of the simulated model's metadata.
type tritonTensor struct {
	Name     string  `json:"name"`
	Datatype string  `json:"datatype"`
	Shape    []int64 `json:"shape"`
}

// tritonInputs and tritonOutputs are the simulated model's tensors, as its
// metadata lists them over HTTP (GET /v2/models/{model}) and gRPC
// (ModelMetadata). The model answers both the generate extension (a
// TensorRT-LLM ensemble's text_input, max_tokens, stream -> text_output)
// and /infer (a classifier's TEXT -> LABEL), so it lists both sets.
var (
	tritonInputs = []tritonTensor{{tritonpb.TextInput, "BYTES", []int64{-1, 1}}, {tritonpb.MaxTokens, "INT32", []int64{-1, 1}},
		{tritonpb.Stream, "BOOL", []int64{-1, 1}}, {inferInput, "BYTES", []int64{-1, 1}}}
	tritonOutputs = []tritonTensor{{tritonpb.TextOutput, "BYTES", []int64{-1, -1}}, {inferOutput, "BYTES", []int64{-1, 1}}}
)

// unknownModel is Triton's message for a model it does not serve.
func unknownModel(name string) string {
	return fmt.Sprintf("Request for unknown model: '%s' is not found", name)
}

// tritonModel answers GET /v2/models/{model}: the model's metadata.
func (s *Server) tritonModel(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	if r.PathValue("model") != s.prof.Model {
		w.WriteHeader(http.StatusBadRequest)
		_, _ = fmt.Fprintf(w, `{"error":%s}`, jsonString(unknownModel(r.PathValue("model"))))
		return
	}
	_ = json.NewEncoder(w).Encode(struct {
		Name     string         `json:"name"`
		Versions []string       `json:"versions"`
		Platform string         `json:"platform"`
		Inputs   []tritonTensor `json:"inputs"`
		Outputs  []tritonTensor `json:"outputs"`
	}{s.prof.Model, []string{"1"}, "ensemble", tritonInputs, tritonOutputs})
}
