package protocol

import (
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/testing/protocmp"

	"github.com/inferload/inferload/internal/tritonpb"
	"github.com/inferload/inferload/record"
)

// The ModelInferRequest: the prompt, max_tokens and stream as raw [1,1]
// tensors of the TensorRT-LLM ensemble's names, text_output asked for,
// body fields as parameters and, streaming, the empty final response
// asked for. The same body renders to the same bytes.
func TestRenderTritonGRPC(t *testing.T) {
	t.Parallel()
	b := OpenAIBody{Model: "ensemble", Prompt: "hi", MaxTokens: 7, Stream: true,
		Extra: map[string]any{"temperature": 0.5, "top_k": 3, "beam": false, "lora": "a"}}
	raw, err := b.Render(APITritonGRPC)
	if err != nil {
		t.Fatal(err)
	}
	var got tritonpb.ModelInferRequest
	if err := proto.Unmarshal(raw, &got); err != nil {
		t.Fatal(err)
	}
	tensor := func(name, dtype string) *tritonpb.ModelInferRequest_InferInputTensor {
		return &tritonpb.ModelInferRequest_InferInputTensor{Name: name, Datatype: dtype, Shape: []int64{1, 1}}
	}
	want := &tritonpb.ModelInferRequest{
		ModelName:        "ensemble",
		Inputs:           []*tritonpb.ModelInferRequest_InferInputTensor{tensor("text_input", "BYTES"), tensor("max_tokens", "INT32"), tensor("stream", "BOOL")},
		Outputs:          []*tritonpb.ModelInferRequest_InferRequestedOutputTensor{{Name: "text_output"}},
		RawInputContents: [][]byte{{2, 0, 0, 0, 'h', 'i'}, {7, 0, 0, 0}, {1}},
		Parameters: map[string]*tritonpb.InferParameter{
			"temperature":                        {ParameterChoice: &tritonpb.InferParameter_DoubleParam{DoubleParam: 0.5}},
			"top_k":                              {ParameterChoice: &tritonpb.InferParameter_Int64Param{Int64Param: 3}},
			"beam":                               {ParameterChoice: &tritonpb.InferParameter_BoolParam{BoolParam: false}},
			"lora":                               {ParameterChoice: &tritonpb.InferParameter_StringParam{StringParam: "a"}},
			"triton_enable_empty_final_response": {ParameterChoice: &tritonpb.InferParameter_BoolParam{BoolParam: true}},
		},
	}
	if diff := cmp.Diff(want, &got, protocmp.Transform()); diff != "" {
		t.Errorf("request (-want +got):\n%s", diff)
	}
	again, _ := b.Render(APITritonGRPC)
	if string(again) != string(raw) {
		t.Error("the same body rendered to different bytes")
	}
	// Not streaming: no max_tokens without one, stream false, no parameters.
	raw, _ = OpenAIBody{Model: "m", Prompt: "x"}.Render(APITritonGRPC)
	got.Reset()
	_ = proto.Unmarshal(raw, &got)
	if len(got.GetInputs()) != 2 || got.GetInputs()[1].GetName() != "stream" || string(got.GetRawInputContents()[1]) != "\x00" || got.GetParameters() != nil {
		t.Errorf("plain request: %v", &got)
	}
}

// With target.triton.input set, the request is a tensor model's: the
// prompt in that BYTES input, the output asked for by name, nothing else.
func TestRenderTritonGRPCTensors(t *testing.T) {
	t.Parallel()
	raw, err := OpenAIBody{Model: "bert", Prompt: "fine", MaxTokens: 9, Stream: true,
		Tensors: TritonTensors{Input: "TEXT", Output: "LABEL"}}.Render(APITritonGRPC)
	if err != nil {
		t.Fatal(err)
	}
	var got tritonpb.ModelInferRequest
	if err := proto.Unmarshal(raw, &got); err != nil {
		t.Fatal(err)
	}
	want := &tritonpb.ModelInferRequest{ModelName: "bert",
		Inputs:           []*tritonpb.ModelInferRequest_InferInputTensor{{Name: "TEXT", Datatype: "BYTES", Shape: []int64{1, 1}}},
		Outputs:          []*tritonpb.ModelInferRequest_InferRequestedOutputTensor{{Name: "LABEL"}},
		RawInputContents: [][]byte{{4, 0, 0, 0, 'f', 'i', 'n', 'e'}},
	}
	if diff := cmp.Diff(want, &got, protocmp.Transform()); diff != "" {
		t.Errorf("request (-want +got):\n%s", diff)
	}
}

// A tensor model's response: the output named (or the first) must hold
// data, as for triton-infer's /infer reply.
func TestTensorOutput(t *testing.T) {
	t.Parallel()
	label := func(raw []byte, contents *tritonpb.InferTensorContents) *tritonpb.ModelInferResponse {
		r := &tritonpb.ModelInferResponse{Outputs: []*tritonpb.ModelInferResponse_InferOutputTensor{
			{Name: "LABEL", Datatype: "BYTES", Contents: contents}}}
		if raw != nil {
			r.RawOutputContents = [][]byte{raw}
		}
		return r
	}
	good := tritonpb.AppendBytes(nil, "positive")
	tests := []struct {
		name string
		r    *tritonpb.ModelInferResponse
		want string
		err  record.ErrorKind
	}{
		// A raw label, the output named or not.
		{"named", label(good, nil), "LABEL", record.ErrNone},
		{"first", label(good, nil), "", record.ErrNone},
		// Typed contents count too.
		{"typed", label(nil, &tritonpb.InferTensorContents{BytesContents: [][]byte{[]byte("x")}}), "", record.ErrNone},
		// The named output missing: the response's outputs are named.
		{"missing", label(good, nil), "PROBS", record.ErrEmptyOutput},
		// No data, or no outputs at all.
		{"empty", label(nil, nil), "", record.ErrEmptyOutput},
		{"none", &tritonpb.ModelInferResponse{}, "", record.ErrEmptyOutput},
		// A raw BYTES element running past the tensor.
		{"cut", label(good[:len(good)-1], nil), "", record.ErrMalformedEvent},
	}
	for _, tt := range tests {
		err := tensorOutput(tt.r, tt.want)
		var f *failure
		switch {
		case tt.err == record.ErrNone && err != nil:
			t.Errorf("%s: %v", tt.name, err)
		case tt.err != record.ErrNone && (!errors.As(err, &f) || f.kind != tt.err):
			t.Errorf("%s: %v, want %s", tt.name, err, tt.err)
		}
	}
	if err := tensorOutput(label(good, nil), "PROBS"); !strings.Contains(err.Error(), "(it holds LABEL): check target.triton.output") {
		t.Errorf("missing output: %v", err)
	}
}

// What Render refuses for triton-grpc, naming the fix.
func TestRenderTritonGRPCErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		body OpenAIBody
		msg  string
	}{
		// The model is in the request, not the URL.
		{OpenAIBody{Prompt: "x"}, "set target.model"},
		// Parameters hold scalars only.
		{OpenAIBody{Model: "m", Extra: map[string]any{"stop": []any{"a"}}}, `field "stop" is a []interface {}`},
		// Only chat sends images.
		{OpenAIBody{Model: "m", Images: []Image{{URL: "data:,"}}}, "cannot send images"},
	}
	for _, tt := range tests {
		if _, err := tt.body.Render(APITritonGRPC); err == nil || !strings.Contains(err.Error(), tt.msg) {
			t.Errorf("%+v: %v, want %q", tt.body, err, tt.msg)
		}
	}
}

// Each gRPC status the client can meet, as the HTTP status it stands for
// or the network failure gRPC reports it as.
func TestGRPCKind(t *testing.T) {
	t.Parallel()
	tests := []struct {
		code   codes.Code
		msg    string
		events int
		want   record.ErrorKind
	}{
		// A server out of capacity: Triton's queue full, a 503 behind a gateway.
		{codes.Unavailable, "Exceeds maximum queue size", 0, record.ErrHTTP5xx},
		// Rate limited: 429.
		{codes.ResourceExhausted, "rate limit", 0, record.ErrHTTP429},
		// Rejected input, unknown model, bad key, missing method: 4xx.
		{codes.InvalidArgument, "unexpected inference input", 0, record.ErrHTTP4xx},
		{codes.NotFound, "Request for unknown model", 0, record.ErrHTTP4xx},
		{codes.Unauthenticated, "no key", 0, record.ErrHTTP4xx},
		{codes.Unimplemented, "unknown service inference.GRPCInferenceService", 0, record.ErrHTTP4xx},
		// The server failed: 5xx.
		{codes.Internal, "model crashed", 3, record.ErrHTTP5xx},
		{codes.Unknown, "?", 0, record.ErrHTTP5xx},
		// The server's own deadline, before and after content.
		{codes.DeadlineExceeded, "deadline", 0, record.ErrTimeoutBeforeTTFT},
		{codes.DeadlineExceeded, "deadline", 2, record.ErrTimeoutAfterTTFT},
		// gRPC's transport: refused, timed out, TLS, reset, lost.
		{codes.Unavailable, `connection error: desc = "transport: Error while dialing: dial tcp 127.0.0.1:1: connect: connection refused"`, 0, record.ErrConnRefused},
		{codes.Unavailable, `connection error: desc = "transport: Error while dialing: dial tcp 10.0.0.1:8001: i/o timeout"`, 0, record.ErrConnectTimeout},
		{codes.Unavailable, `connection error: desc = "transport: authentication handshake failed: tls: first record does not look like a TLS handshake"`, 0, record.ErrTLS},
		{codes.Unavailable, "error reading from server: EOF", 4, record.ErrConnReset},
		{codes.Internal, "stream terminated by RST_STREAM with error code: INTERNAL_ERROR", 1, record.ErrConnReset},
		// A reply that does not decode, or is over the size limit.
		{codes.Internal, "grpc: failed to unmarshal the received message: proto: cannot parse invalid wire-format data", 0, record.ErrMalformedEvent},
		{codes.ResourceExhausted, "grpc: received message larger than max (5000000 vs. 4194304)", 0, record.ErrMalformedEvent},
	}
	for _, tt := range tests {
		if got := grpcKind(tt.code, tt.msg, tt.events); got != tt.want {
			t.Errorf("%v %q after %d events: %s, want %s", tt.code, tt.msg, tt.events, got, tt.want)
		}
	}
}

// Base URLs the triton-grpc API cannot use are refused with the shape to
// use; a server that is not there is connection_refused.
func TestTritonGRPCURLs(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ url, msg string }{
		{"http://127.0.0.1:8001/v2", "takes the gRPC server's address only"},
		{"grpc://127.0.0.1:8001", "a gRPC server without TLS is http://host:port"},
		{"grpcs://triton:8001", "a gRPC server over TLS is https://host:port"},
	} {
		if err := CheckAPIURL(APITritonGRPC, tt.url); err == nil || !strings.Contains(err.Error(), tt.msg) {
			t.Errorf("%s: %v, want %q", tt.url, err, tt.msg)
		}
	}
	if err := CheckAPIURL(APITritonGRPC, "http://127.0.0.1:8001/"); err != nil {
		t.Errorf("root URL: %v", err)
	}
	body, _ := OpenAIBody{Model: "m", Prompt: "x"}.Render(APITritonGRPC)
	// A client whose base has a path fails its triton-grpc requests at once.
	c := newGRPCTestClient(t, "http://127.0.0.1:1/v2")
	if got := doTrace(t, c, &Request{API: APITritonGRPC, Body: body}); got.Err != record.ErrOther || !strings.Contains(got.ErrMsg, "address only") {
		t.Errorf("path: %s %q", got.Err, got.ErrMsg)
	}
	// Nothing listening.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	c = newGRPCTestClient(t, "http://"+addr)
	if got := doTrace(t, c, &Request{API: APITritonGRPC, Body: body}); got.Err != record.ErrConnRefused || !got.Sent.IsZero() {
		t.Errorf("refused: %s %q, sent %v", got.Err, got.ErrMsg, got.Sent)
	}
}

func newGRPCTestClient(t *testing.T, base string) *OpenAI {
	t.Helper()
	c, err := NewOpenAI(OpenAIOptions{BaseURL: base, ConnectTimeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

// TestGeneratesByMode: triton-grpc's reply is generated text unless it
// asks a tensor model, as the HTTP APIs' are by API.
func TestGeneratesByMode(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		api   API
		body  OpenAIBody
		wants bool
	}{
		{APITritonGRPC, OpenAIBody{}, true},
		{APITritonGRPC, OpenAIBody{Tensors: TritonTensors{Input: "TEXT"}}, false},
		{APITritonInfer, OpenAIBody{}, false},
		{APIEmbeddings, OpenAIBody{}, false},
		{APIImages, OpenAIBody{}, false},
		{APIChat, OpenAIBody{Tensors: TritonTensors{Input: "TEXT"}}, true},
	} {
		if got := tt.body.Generates(tt.api); got != tt.wants {
			t.Errorf("%s %+v: Generates = %v", tt.api, tt.body.Tensors, got)
		}
		req := Request{API: tt.api, NoTokens: !tt.body.Generates(tt.api)}
		if req.Generates() != tt.wants {
			t.Errorf("%s: Request.Generates = %v", tt.api, req.Generates())
		}
	}
}
