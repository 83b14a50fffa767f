package protocol

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
)

// The native APIs of the servers inferload measures, beside the OpenAI
// ones (APIChat, APICompletions, APIEmbeddings). Their base URL is the
// server's root (http://host:port), not .../v1. docs/apis.md describes each.
const (
	// APITGI is Text Generation Inference's own API: POST {base}/generate,
	// or {base}/generate_stream (SSE) when streaming.
	APITGI API = "tgi"
	// APIOllama is Ollama's own chat API: POST {base}/api/chat, answered
	// with one JSON object or, streaming, newline-delimited JSON.
	APIOllama API = "ollama"
	// APIOllamaGenerate is Ollama's completion API: POST {base}/api/generate
	// with the prompt as one text, answered as /api/chat is, the text
	// under "response".
	APIOllamaGenerate API = "ollama-generate"
	// APITriton is Triton's (KServe v2) generate extension: POST
	// {base}/v2/models/{model}/generate, or .../generate_stream (SSE).
	APITriton API = "triton"
	// APITorchServe is TorchServe's inference API: POST
	// {base}/predictions/{model}, answered in one body or, streaming, in
	// HTTP chunks.
	APITorchServe API = "torchserve"
)

// apiInfo is what differs between the APIs outside their bodies and
// streams: where the base URL points and what the endpoint's path needs.
type apiInfo struct {
	// root: the base URL is the server's root, not an OpenAI .../v1.
	root bool
	// modelInPath: the endpoint's path names the model (target.model).
	modelInPath bool
	// whole: the reply is one body, never a stream (embeddings, images,
	// tensors).
	whole bool
	// noMaxTokens: the API generates text but takes no output bound
	// (transcriptions: the audio decides the length), so max_tokens and
	// ignore_eos do not apply.
	noMaxTokens bool
	// noIgnoreEOS: the API has no ignore_eos, so its requests never send
	// one and a record of it never claims one: only chat and completions
	// (vLLM's, SGLang's and llama.cpp's extension) carry it.
	noIgnoreEOS bool
	// anyPath: the base URL may hold any path (the templated API's
	// service is wherever the user says).
	anyPath bool
	// example is the base URL shape, for error messages.
	example string
}

// apiInfos lists every API, in the order error messages name them.
var apiInfos = []struct {
	api  API
	info apiInfo
}{
	{APIChat, apiInfo{example: "http://127.0.0.1:8000/v1"}},
	{APICompletions, apiInfo{example: "http://127.0.0.1:8000/v1"}},
	{APIEmbeddings, apiInfo{whole: true, example: "http://127.0.0.1:8000/v1"}},
	{APIImages, apiInfo{whole: true, example: "http://127.0.0.1:8000/v1"}},
	{APIResponses, apiInfo{noIgnoreEOS: true, example: "http://127.0.0.1:8000/v1"}},
	{APIMessages, apiInfo{noIgnoreEOS: true, example: "http://127.0.0.1:8000/v1"}},
	{APIRerank, apiInfo{whole: true, example: "http://127.0.0.1:8000/v1"}},
	{APIScore, apiInfo{whole: true, example: "http://127.0.0.1:8000/v1"}},
	{APITranscriptions, apiInfo{noMaxTokens: true, example: "http://127.0.0.1:8000/v1"}},
	{APIRealtime, apiInfo{noIgnoreEOS: true, example: "http://127.0.0.1:8000/v1"}},
	{APITGI, apiInfo{root: true, noIgnoreEOS: true, example: "http://127.0.0.1:8080"}},
	{APIOllama, apiInfo{root: true, noIgnoreEOS: true, example: "http://127.0.0.1:11434"}},
	{APIOllamaGenerate, apiInfo{root: true, noIgnoreEOS: true, example: "http://127.0.0.1:11434"}},
	{APITriton, apiInfo{root: true, modelInPath: true, noIgnoreEOS: true, example: "http://127.0.0.1:8000"}},
	{APITorchServe, apiInfo{root: true, modelInPath: true, noIgnoreEOS: true, example: "http://127.0.0.1:8080"}},
	{APIPooling, apiInfo{root: true, whole: true, example: "http://127.0.0.1:8000"}},
	{APITritonInfer, apiInfo{root: true, modelInPath: true, whole: true, example: "http://127.0.0.1:8000"}},
	{APITritonGRPC, apiInfo{root: true, modelInPath: true, noIgnoreEOS: true, example: "http://127.0.0.1:8001"}},
	{APIHTTP, apiInfo{root: true, anyPath: true, noIgnoreEOS: true, example: "http://127.0.0.1:9000"}},
}

func infoOf(api API) (apiInfo, bool) {
	for _, a := range apiInfos {
		if a.api == api {
			return a.info, true
		}
	}
	return apiInfo{}, false
}

// APIs returns every API this package speaks, OpenAI ones first.
func APIs() []API {
	out := make([]API, len(apiInfos))
	for k, a := range apiInfos {
		out[k] = a.api
	}
	return out
}

// APINames is APIs as "chat, completions, ... or torchserve", for messages.
func APINames() string {
	names := make([]string, len(apiInfos))
	for k, a := range apiInfos {
		names[k] = string(a.api)
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

// Known reports whether the package speaks api.
func (a API) Known() bool {
	_, ok := infoOf(a)
	return ok
}

// Native reports whether api is a server's own API, whose base URL is the
// server's root rather than an OpenAI .../v1.
func (a API) Native() bool {
	info, _ := infoOf(a)
	return info.root
}

// NeedsModel reports whether api's endpoint path names the model, so a
// target without a model cannot be called.
func (a API) NeedsModel() bool {
	info, _ := infoOf(a)
	return info.modelInPath
}

// Streams reports whether api's replies can stream: false for those that
// always answer in one body (embeddings, images, triton-infer), whose requests
// are sent without asking for a stream. The http API streams or not by
// its response mode (HTTPAPIOptions.Streams).
func (a API) Streams() bool {
	info, _ := infoOf(a)
	return !info.whole
}

// Generates reports whether api's reply is generated text counted in
// tokens, so that max_tokens, ignore_eos and the output token figures
// apply to it: false for embeddings, images and triton-infer, which answer
// with vectors, pictures or tensors.
func (a API) Generates() bool {
	info, _ := infoOf(a)
	return !info.whole
}

// TakesMaxTokens reports whether api's requests carry an output bound
// (max_tokens or its name for it), so that max_tokens and ignore_eos
// apply to its records: false for the APIs that generate nothing and for
// transcriptions, whose audio decides the length.
func (a API) TakesMaxTokens() bool {
	info, _ := infoOf(a)
	return !info.whole && !info.noMaxTokens
}

// TakesIgnoreEOS reports whether api's requests can carry ignore_eos, so
// that their records may claim it: false where TakesMaxTokens is, and for
// realtime, whose response.create has no such field.
func (a API) TakesIgnoreEOS() bool {
	info, _ := infoOf(a)
	return a.TakesMaxTokens() && !info.noIgnoreEOS
}

// CheckAPIURL checks that raw is a base URL of the shape api expects: an
// OpenAI API's .../v1 given to a native API, or a native path prefix
// (/v2, /api, /generate, /predictions) left in it, gets an error naming
// the shape to use.
func CheckAPIURL(api API, raw string) error {
	u, err := parseBaseURL(raw)
	if err != nil {
		return err
	}
	info, ok := infoOf(api)
	if !ok || !info.root || info.anyPath {
		return nil
	}
	path := strings.TrimRight(u.Path, "/")
	if api == APITritonGRPC && path != "" {
		return fmt.Errorf("base URL %q: the %s API takes the gRPC server's address only (e.g. %s), not a path: "+
			"the RPC names the service and method", u.Redacted(), api, info.example)
	}
	for _, bad := range []string{"/v1", "/v2", "/api", "/generate", "/generate_stream", "/predictions"} {
		if strings.HasSuffix(path, bad) || strings.Contains(path, bad+"/") {
			return fmt.Errorf("base URL %q: the %s API takes the server's root (e.g. %s), not a path ending in %s: "+
				"inferload adds the endpoint's path itself", u.Redacted(), api, info.example, bad)
		}
	}
	return nil
}

// endpoint is where one API's requests go: the plain and the streaming
// URL (the same for APIs that stream on request), parsed once and shared
// read-only by every request.
type endpoint struct {
	plain, stream *url.URL
	method        string // "" for POST
}

// endpoints builds every API's URLs under base; model names the model for
// the APIs whose path holds it (an empty model leaves them unset, and a
// request to them fails at once with a clear message).
func endpoints(base *url.URL, model string, h *httpAPI, httpPath string) map[API]endpoint {
	if base.Path == "" {
		root := *base
		root.Path = "/" // JoinPath would make a relative "generate" of ""
		base = &root
	}
	same := func(path string) endpoint {
		u := base.JoinPath(path)
		return endpoint{plain: u, stream: u}
	}
	eps := map[API]endpoint{
		APIChat:           same("chat/completions"),
		APICompletions:    same("completions"),
		APIEmbeddings:     same("embeddings"),
		APIImages:         same("images/generations"),
		APIResponses:      same("responses"),
		APIMessages:       same("messages"),
		APIRerank:         same("rerank"),
		APIScore:          same("score"),
		APITranscriptions: same("audio/transcriptions"),
		APIRealtime:       same("realtime"),
		APIPooling:        same("pooling"),
		APITGI:            {plain: base.JoinPath("generate"), stream: base.JoinPath("generate_stream")},
		APIOllama:         same("api/chat"),
		APIOllamaGenerate: same("api/generate"),
	}
	if h != nil {
		ep := endpoint{plain: base, stream: base, method: h.method}
		if p := strings.TrimPrefix(httpPath, "/"); p != "" {
			ep.plain = base.JoinPath(p)
			ep.stream = ep.plain
		}
		eps[APIHTTP] = ep
	}
	if model != "" {
		// One path segment each, escaped: a name like org/model must not
		// become two segments.
		m := url.PathEscape(model)
		eps[APITriton] = endpoint{plain: base.JoinPath("v2/models", m, "generate"), stream: base.JoinPath("v2/models", m, "generate_stream")}
		eps[APITorchServe] = same("predictions/" + m)
		eps[APITritonInfer] = same("v2/models/" + m + "/infer")
	}
	return eps
}

// reader reads one API's 2xx reply into the trace: stream for a streamed
// reply, body for a whole one (given its bytes and when the last
// arrived).
type reader struct {
	stream func(cl *call, resp *http.Response) error
	body   func(cl *call, b []byte, a arrival) error
}

// replyReaders maps each generating API to its reply readers (embeddings,
// images, triton-infer and http are read apart: readWhole, readImages,
// readHTTP).
var replyReaders = map[API]reader{
	APIChat:           {(*call).readStream, (*call).applyBody},
	APICompletions:    {(*call).readStream, (*call).applyBody},
	APIResponses:      {(*call).readResponsesStream, (*call).applyResponsesBody},
	APIMessages:       {(*call).readMessagesStream, (*call).applyMessagesBody},
	APITranscriptions: {(*call).readTranscriptionStream, (*call).applyTranscriptionBody},
	APITGI:            {(*call).readTGIStream, (*call).applyTGIBody},
	APIOllama:         {(*call).readOllamaStream, (*call).applyOllamaBody},
	APIOllamaGenerate: {(*call).readOllamaStream, (*call).applyOllamaBody},
	APITriton:         {(*call).readTritonStream, (*call).applyTritonBody},
	APITorchServe:     {(*call).readTorchServeStream, (*call).applyTorchServeBody},
}

// errNoModel fails a request to an API whose path needs the model when the
// client was built without one.
var errNoModel = errors.New("needs the model's name in its path: set target.model")

// errNoHTTP fails a request to the http API when the client was built
// without its options.
var errNoHTTP = errors.New("needs its request template: set target.http")
