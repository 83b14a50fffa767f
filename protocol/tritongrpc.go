package protocol

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"google.golang.org/protobuf/proto"

	"github.com/inferload/inferload/internal/tritonpb"
	"github.com/inferload/inferload/record"
)

// APITritonGRPC is Triton's KServe v2 gRPC protocol for LLM models:
// ModelInfer (one response with the whole text) or, streaming,
// ModelStreamInfer (one response per token from a decoupled model, then
// an empty one marked triton_final_response). The base URL is the gRPC
// port as http://host:port (cleartext HTTP/2, Triton's default) or
// https://host:port (TLS); the model is named in each request. With
// OpenAIOptions.Triton.Input set it speaks to a tensor model instead, as
// APITritonInfer does over HTTP: ModelInfer only, no content event.
const APITritonGRPC API = "triton-grpc"

// Generates reports whether the reply to b sent to api is generated text:
// api's answer (API.Generates), except triton-grpc asking a tensor model
// (Tensors.Input set), which answers tensors.
func (b OpenAIBody) Generates(api API) bool {
	return api.Generates() && (api != APITritonGRPC || b.Tensors.Input == "")
}

// renderTritonGRPC builds a ModelInferRequest, marshalled once here so
// that sending it costs no encoding: an LLM model's (generateRequest) or,
// when Tensors.Input is set, a tensor model's (tensorRequest), with Extra
// as the request's parameters (a bool, number or string each). Streaming
// also asks for Triton's empty final response, so the client sees where
// the request's stream ends.
func (b OpenAIBody) renderTritonGRPC() ([]byte, error) {
	if b.Model == "" {
		return nil, fmt.Errorf("render body: the %s API names the model in each request: set target.model", APITritonGRPC)
	}
	var r *tritonpb.ModelInferRequest
	if b.Tensors.Input != "" {
		r = b.tensorRequest()
	} else {
		r = b.generateRequest()
	}
	params, err := grpcParams(b.Extra)
	if err != nil {
		return nil, err
	}
	if b.Stream && b.Tensors.Input == "" {
		params[tritonpb.ParamEnableEmptyFinal] = &tritonpb.InferParameter{ParameterChoice: &tritonpb.InferParameter_BoolParam{BoolParam: true}}
	}
	if len(params) > 0 {
		r.Parameters = params
	}
	out, err := proto.MarshalOptions{Deterministic: true}.Marshal(r)
	if err != nil {
		return nil, fmt.Errorf("render body: %w", err)
	}
	return out, nil
}

// grpcTensor is a [1, 1] input tensor.
func grpcTensor(name, dtype string) *tritonpb.ModelInferRequest_InferInputTensor {
	return &tritonpb.ModelInferRequest_InferInputTensor{Name: name, Datatype: dtype, Shape: []int64{1, 1}}
}

// generateRequest is an LLM model's request: text_input, max_tokens (when
// sent) and stream, text_output asked for.
func (b OpenAIBody) generateRequest() *tritonpb.ModelInferRequest {
	r := &tritonpb.ModelInferRequest{
		ModelName:        b.Model,
		Inputs:           []*tritonpb.ModelInferRequest_InferInputTensor{grpcTensor(tritonpb.TextInput, "BYTES")},
		Outputs:          []*tritonpb.ModelInferRequest_InferRequestedOutputTensor{{Name: tritonpb.TextOutput}},
		RawInputContents: [][]byte{tritonpb.AppendBytes(nil, b.flatPrompt())},
	}
	if b.sendMaxTokens() {
		r.Inputs = append(r.Inputs, grpcTensor(tritonpb.MaxTokens, "INT32"))
		r.RawInputContents = append(r.RawInputContents, tritonpb.AppendInt32(nil, int32(b.MaxTokens)))
	}
	r.Inputs = append(r.Inputs, grpcTensor(tritonpb.Stream, "BOOL"))
	r.RawInputContents = append(r.RawInputContents, tritonpb.AppendBool(nil, b.Stream))
	return r
}

// tensorRequest is a tensor model's request, as triton-infer's over HTTP:
// the prompt as a [1, 1] BYTES tensor in Tensors.Input, the output asked
// for by name when one is set; no max_tokens or stream.
func (b OpenAIBody) tensorRequest() *tritonpb.ModelInferRequest {
	r := &tritonpb.ModelInferRequest{
		ModelName:        b.Model,
		Inputs:           []*tritonpb.ModelInferRequest_InferInputTensor{grpcTensor(b.Tensors.Input, "BYTES")},
		RawInputContents: [][]byte{tritonpb.AppendBytes(nil, b.flatPrompt())},
	}
	if b.Tensors.Output != "" {
		r.Outputs = []*tritonpb.ModelInferRequest_InferRequestedOutputTensor{{Name: b.Tensors.Output}}
	}
	return r
}

// grpcParams turns body fields (target.body) into request parameters,
// which hold one bool, integer, number or string each.
func grpcParams(extra map[string]any) (map[string]*tritonpb.InferParameter, error) {
	params := make(map[string]*tritonpb.InferParameter, len(extra)+1)
	for _, k := range slices.Sorted(maps.Keys(extra)) {
		p := &tritonpb.InferParameter{}
		switch v := extra[k].(type) {
		case bool:
			p.ParameterChoice = &tritonpb.InferParameter_BoolParam{BoolParam: v}
		case int:
			p.ParameterChoice = &tritonpb.InferParameter_Int64Param{Int64Param: int64(v)}
		case int64:
			p.ParameterChoice = &tritonpb.InferParameter_Int64Param{Int64Param: v}
		case uint64:
			p.ParameterChoice = &tritonpb.InferParameter_Uint64Param{Uint64Param: v}
		case float64:
			p.ParameterChoice = &tritonpb.InferParameter_DoubleParam{DoubleParam: v}
		case string:
			p.ParameterChoice = &tritonpb.InferParameter_StringParam{StringParam: v}
		default:
			return nil, fmt.Errorf("render body: field %q is a %T: the %s API sends body fields as request parameters, "+
				"which hold a bool, number or string", k, v, APITritonGRPC)
		}
		params[k] = p
	}
	return params, nil
}

// tensorOutput checks a tensor model's response as applyTritonInfer
// checks /infer's: the output named want (or the first) must hold data.
func tensorOutput(r *tritonpb.ModelInferResponse, want string) error {
	outs := r.GetOutputs()
	if len(outs) == 0 {
		return &failure{record.ErrEmptyOutput, "infer response has no output tensor"}
	}
	k := 0
	if want != "" {
		names := make([]string, len(outs))
		for k = range outs {
			names[k] = outs[k].GetName()
			if names[k] == want {
				break
			}
		}
		if names[k] != want {
			return &failure{record.ErrEmptyOutput, "infer response has no output tensor " + want +
				" (it holds " + strings.Join(names, ", ") + "): check target.triton.output"}
		}
	}
	if raw := r.GetRawOutputContents(); k < len(raw) && len(raw[k]) > 0 {
		if outs[k].GetDatatype() == "BYTES" {
			if _, err := tritonpb.AnyBytes(raw[k]); err != nil {
				return &failure{record.ErrMalformedEvent, "output tensor " + outs[k].GetName() + ": " + err.Error()}
			}
		}
		return nil
	}
	if hasContents(outs[k].GetContents()) {
		return nil
	}
	return &failure{record.ErrEmptyOutput, "output tensor " + outs[k].GetName() + " has no data"}
}

// hasContents reports whether typed tensor contents hold an element.
func hasContents(c *tritonpb.InferTensorContents) bool {
	return len(c.GetBoolContents())+len(c.GetIntContents())+len(c.GetInt64Contents())+len(c.GetUintContents())+
		len(c.GetUint64Contents())+len(c.GetFp32Contents())+len(c.GetFp64Contents())+len(c.GetBytesContents()) > 0
}

// textOutput reports whether a response's text_output holds text: a
// non-empty element, in raw form or as bytes_contents. A response
// without text_output (the empty final one) holds none; a raw tensor
// whose element runs past its end is malformed.
func textOutput(r *tritonpb.ModelInferResponse) (bool, error) {
	for k, out := range r.GetOutputs() {
		if out.GetName() != tritonpb.TextOutput {
			continue
		}
		if raw := r.GetRawOutputContents(); k < len(raw) {
			return tritonpb.AnyBytes(raw[k])
		}
		for _, e := range out.GetContents().GetBytesContents() {
			if len(e) > 0 {
				return true, nil
			}
		}
		return false, nil
	}
	return false, nil
}
