package sim

import (
	"context"
	"net/http"
	"strings"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/inferload/inferload/internal/tritonpb"
)

// rpc is one inference request of the gRPC API being answered: an HTTP
// call's draws (fault, length, text) and engine stream, with the RPC's
// context in place of the HTTP request's.
type rpc struct {
	*call
	req *tritonpb.ModelInferRequest
}

// newRPC checks a request against the model and draws its call, as
// newCall does for the HTTP APIs; streamRPC is whether it came on
// ModelStreamInfer, the only RPC that can stream tokens.
func (s *Server) newRPC(ctx context.Context, req *tritonpb.ModelInferRequest, streamRPC bool) (*rpc, error) {
	var in apiRequest
	var infer *inferCall
	var aerr *apiError
	if classifies(req) {
		in, infer, aerr = parseTritonGRPCInfer(req, s.prof.Model)
	} else {
		in, aerr = parseTritonGRPC(req, s.prof.Model, streamRPC)
	}
	var g generation
	if aerr == nil {
		g, aerr = settleGeneration(in, apiCompletions, s.prof)
		g.infer = infer
	}
	if aerr != nil {
		return nil, grpcStatus(aerr)
	}
	md, _ := metadata.FromIncomingContext(ctx)
	first := func(k string) string {
		if v := md.Get(k); len(v) > 0 {
			return v[0]
		}
		return ""
	}
	c := s.drawCall(g, first("x-request-id"), first("traceparent"))
	c.ctx = ctx
	return &rpc{call: c, req: req}, nil
}

// classifies reports whether a request is for the classification model
// (its input TEXT, as on /v2/models/{model}/infer) rather than the LLM.
func classifies(req *tritonpb.ModelInferRequest) bool {
	in := req.GetInputs()
	return len(in) > 0 && in[0].GetName() == inferInput
}

// parseTritonGRPCInfer reads a classification request: each element of
// TEXT is one row of the batch, as for /infer (parseTritonInfer).
func parseTritonGRPCInfer(req *tritonpb.ModelInferRequest, model string) (apiRequest, *inferCall, *apiError) {
	if req.GetModelName() != model {
		return apiRequest{}, nil, &apiError{status: http.StatusNotFound, msg: unknownModel(req.GetModelName())}
	}
	for _, o := range req.GetOutputs() {
		if o.GetName() != inferOutput {
			return apiRequest{}, nil, badRequest("", "unexpected inference output '%s' for model '%s'", o.GetName(), model)
		}
	}
	if len(req.GetInputs()) != 1 {
		return apiRequest{}, nil, badRequest("", "expected 1 inputs but got %d inputs for model '%s'", len(req.GetInputs()), model)
	}
	in := req.GetInputs()[0]
	if in.GetDatatype() != "BYTES" {
		return apiRequest{}, nil, badRequest("", "inference input '%s' data-type is '%s', but model '%s' expects 'BYTES'", in.GetName(), in.GetDatatype(), model)
	}
	var texts []string
	if raw := req.GetRawInputContents(); len(raw) > 0 {
		if err := tritonpb.EachBytes(raw[0], func(e []byte) { texts = append(texts, string(e)) }); err != nil {
			return apiRequest{}, nil, badRequest("", "input '%s': %v", in.GetName(), err)
		}
	} else {
		for _, b := range in.GetContents().GetBytesContents() {
			texts = append(texts, string(b))
		}
	}
	if len(texts) == 0 {
		return apiRequest{}, nil, badRequest("", "input '%s' has no data", in.GetName())
	}
	one := 1
	return apiRequest{Prompt: promptJSON(strings.Join(texts, "\n")), MaxTokens: &one, IgnoreEOS: true},
		&inferCall{id: req.GetId(), batch: len(texts)}, nil
}

// parseTritonGRPC reads the LLM model's inputs (text_input, and the
// optional max_tokens and stream), raw or typed, into the OpenAI request
// the engine's limits are checked against.
func parseTritonGRPC(req *tritonpb.ModelInferRequest, model string, streamRPC bool) (apiRequest, *apiError) {
	if req.GetModelName() != model {
		return apiRequest{}, &apiError{status: http.StatusNotFound, msg: unknownModel(req.GetModelName())}
	}
	raw := req.GetRawInputContents()
	if len(raw) > 0 && len(raw) != len(req.GetInputs()) {
		return apiRequest{}, badRequest("", "expected %d raw input contents, one per input, got %d", len(req.GetInputs()), len(raw))
	}
	var out apiRequest
	seen := false
	for k, in := range req.GetInputs() {
		var r []byte
		if len(raw) > 0 {
			r = raw[k]
		}
		var aerr *apiError
		switch in.GetName() {
		case tritonpb.TextInput:
			var text string
			text, aerr = firstText(in, r)
			out.Prompt, seen = promptJSON(text), true
		case tritonpb.MaxTokens:
			var n int
			n, aerr = firstInt(in, r)
			out.MaxTokens = &n
		case tritonpb.Stream:
			out.Stream = streamRPC && firstBool(in, r)
		default:
			aerr = badRequest("", "unexpected inference input '%s' for model '%s'", in.GetName(), model)
		}
		if aerr != nil {
			return apiRequest{}, aerr
		}
	}
	if !seen {
		return apiRequest{}, badRequest("", "expected input '%s' for model '%s'", tritonpb.TextInput, model)
	}
	return out, nil
}

// firstText is a BYTES input's first element.
func firstText(in *tritonpb.ModelInferRequest_InferInputTensor, raw []byte) (string, *apiError) {
	if in.GetDatatype() != "BYTES" {
		return "", badRequest("", "inference input '%s' data-type is '%s', but model expects 'BYTES'", in.GetName(), in.GetDatatype())
	}
	if raw == nil {
		if b := in.GetContents().GetBytesContents(); len(b) > 0 {
			return string(b[0]), nil
		}
		return "", badRequest("", "input '%s' has no data", in.GetName())
	}
	var text []byte
	seen := false
	err := tritonpb.EachBytes(raw, func(e []byte) {
		if !seen {
			text, seen = e, true
		}
	})
	if err != nil || !seen {
		return "", badRequest("", "input '%s': unexpected raw contents", in.GetName())
	}
	return string(text), nil
}

// firstInt is an integer input's first element.
func firstInt(in *tritonpb.ModelInferRequest_InferInputTensor, raw []byte) (int, *apiError) {
	if raw != nil {
		v, err := tritonpb.FirstInt32(raw)
		if err != nil {
			return 0, badRequest("", "input '%s': %v", in.GetName(), err)
		}
		return int(v), nil
	}
	if v := in.GetContents().GetIntContents(); len(v) > 0 {
		return int(v[0]), nil
	}
	if v := in.GetContents().GetInt64Contents(); len(v) > 0 {
		return int(v[0]), nil
	}
	return 0, badRequest("", "input '%s' has no data", in.GetName())
}

// firstBool is a BOOL input's first element (false without one).
func firstBool(in *tritonpb.ModelInferRequest_InferInputTensor, raw []byte) bool {
	if raw != nil {
		return len(raw) > 0 && raw[0] != 0
	}
	v := in.GetContents().GetBoolContents()
	return len(v) > 0 && v[0]
}

// start applies the faults that come before any output and hands the
// request to the engine; once it returns nil the caller must abort the
// stream when done (a finished one is left alone).
func (c *rpc) start() error {
	switch c.fault.Kind {
	case FaultStatus:
		return grpcStatus(statusFault(c.fault.Status))
	case FaultSlowFirstByte:
		if !c.pause(c.fault.Delay) {
			return c.gone()
		}
	}
	if err := c.s.submit(c.st); err != nil {
		return grpcStatus(c.s.admissionError(err))
	}
	return nil
}

// await blocks until the scheduler has news for this call; false when the
// client left or the server is closing.
func (c *rpc) await() bool {
	select {
	case <-c.st.notify:
		return true
	case <-c.ctx.Done():
	case <-c.s.done:
	}
	return false
}

// gone is the status of a call that ended because its client left or the
// server is closing.
func (c *rpc) gone() error {
	if err := c.ctx.Err(); err != nil {
		return status.FromContextError(err).Err()
	}
	return status.Error(codes.Unavailable, errClosed.Error())
}

// reset aborts the call's HTTP/2 stream (abortWriter); the status it
// returns is only written by a server that cannot abort (served apart
// from grpcHandler).
func (c *rpc) reset() error {
	if a, ok := c.ctx.Value(abortKey{}).(*abortWriter); ok {
		a.abort.Store(true)
	}
	return status.Error(codes.Unavailable, "simulated fault: connection reset")
}

// whole waits for the whole answer and returns it in one response, or the
// call's fault in its place.
func (c *rpc) whole() (*tritonpb.ModelInferResponse, error) {
	for {
		if !c.await() {
			return nil, c.gone()
		}
		if _, done := c.st.progress(); done {
			break
		}
	}
	text := c.fullText(c.st.req.OutputTokens)
	switch c.fault.Kind {
	case FaultReset:
		return nil, c.reset()
	case FaultStall:
		if !c.pause(c.fault.Delay) {
			return nil, c.gone()
		}
	case FaultMalformed:
		return c.response(text, true), nil
	case FaultErrorEvent:
		return nil, status.Error(codes.Internal, faultMsg)
	}
	return c.response(text, false), nil
}

// response is one ModelInferResponse carrying text as the text_output
// tensor in raw form, or the classifier's LABEL tensor; broken cuts its
// last byte, so the element's length runs past the tensor (the malformed
// fault).
func (c *rpc) response(text string, broken bool) *tritonpb.ModelInferResponse {
	name, rows := tritonpb.TextOutput, 1
	var raw []byte
	if in := c.g.infer; in != nil {
		// The classifier's labels, one a row, as /infer picks them.
		name, rows = inferOutput, in.batch
		for i := range in.batch {
			raw = tritonpb.AppendBytes(raw, inferLabels[(c.words+uint64(i))%uint64(len(inferLabels))])
		}
	} else {
		raw = tritonpb.AppendBytes(make([]byte, 0, 4+len(text)), text)
	}
	if broken {
		raw = raw[:len(raw)-1]
	}
	return &tritonpb.ModelInferResponse{
		ModelName: c.s.prof.Model, ModelVersion: "1", Id: c.req.GetId(),
		Outputs:           []*tritonpb.ModelInferResponse_InferOutputTensor{{Name: name, Datatype: "BYTES", Shape: []int64{int64(rows), 1}}},
		RawOutputContents: [][]byte{raw},
	}
}

// final is the empty response that ends a request's stream.
func (c *rpc) final() *tritonpb.ModelStreamInferResponse {
	return &tritonpb.ModelStreamInferResponse{InferResponse: &tritonpb.ModelInferResponse{
		ModelName: c.s.prof.Model, ModelVersion: "1", Id: c.req.GetId(),
		Parameters: map[string]*tritonpb.InferParameter{tritonpb.ParamFinal: {ParameterChoice: &tritonpb.InferParameter_BoolParam{BoolParam: true}}},
	}}
}

// streamSender is the server side of ModelStreamInfer, as far as a call
// writes to it.
type streamSender interface {
	Send(*tritonpb.ModelStreamInferResponse) error
}

// serveStream answers one request on ModelStreamInfer: its tokens (or its
// whole text), then the final response, with the call's fault, if any,
// somewhere in between. A non-nil error ends the RPC with it.
func (c *rpc) serveStream(out streamSender) error {
	if err := c.start(); err != nil {
		return err
	}
	defer c.s.abort(c.st)
	if !c.g.stream {
		r, err := c.whole()
		if err != nil {
			return err
		}
		if err := out.Send(&tritonpb.ModelStreamInferResponse{InferResponse: r}); err != nil {
			return err
		}
		return c.end(out)
	}
	sent := 0
	for c.await() {
		avail, done := c.st.progress()
		for ; sent < avail; sent++ {
			if sent == c.faultAt {
				if over, err := c.midStreamFault(out, sent); over {
					return err
				}
			}
			if err := out.Send(&tritonpb.ModelStreamInferResponse{InferResponse: c.response(tokenText(c.words, sent), false)}); err != nil {
				return err
			}
		}
		if done {
			return c.end(out)
		}
	}
	return c.gone()
}

// end sends the final response, unless the call's fault is to leave it out.
func (c *rpc) end(out streamSender) error {
	if c.fault.Kind == FaultMissingDone {
		return nil
	}
	return out.Send(c.final())
}

// midStreamFault injects the call's fault before token i; over means the
// request's stream ends, with err as the RPC's status.
func (c *rpc) midStreamFault(out streamSender, i int) (over bool, err error) {
	switch c.fault.Kind {
	case FaultReset:
		return true, c.reset()
	case FaultMalformed:
		return false, out.Send(&tritonpb.ModelStreamInferResponse{InferResponse: c.response(tokenText(c.words, i), true)})
	case FaultStall:
		if !c.pause(c.fault.Delay) {
			return true, c.gone()
		}
	case FaultErrorEvent:
		// Triton reports a failed request on the stream, which stays open.
		return true, out.Send(&tritonpb.ModelStreamInferResponse{ErrorMessage: faultMsg})
	}
	return false, nil
}
