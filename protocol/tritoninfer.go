package protocol

import (
	"encoding/json"
	"maps"
	"strings"

	"github.com/inferload/inferload/record"
)

// APITritonInfer is the KServe v2 inference protocol as Triton serves it:
// POST {base}/v2/models/{model}/infer with JSON tensors, for models that
// are not LLMs (classification, embeddings, rerankers). The prompt is
// sent as a one-element BYTES tensor; the reply's output tensors come in
// one JSON body, never streamed, so as for embeddings the reply's arrival
// is both the first "token" and the end (docs/metrics.md).
const APITritonInfer API = "triton-infer"

// DefaultTritonInput is the input tensor the prompt goes into when
// TritonTensors.Input is empty: the name of the text input in Triton's
// Python-backend and ensemble examples for BERT-style models.
const DefaultTritonInput = "TEXT"

// TritonTensors names the tensors of a triton-infer request, which differ
// from model to model (the model's config.pbtxt, or GET /v2/models/{m}).
type TritonTensors struct {
	// Input is the BYTES input tensor that carries the prompt (default
	// DefaultTritonInput).
	Input string
	// Output is the output tensor the reply must hold, non-empty, for the
	// request to succeed; it is also the one output asked for. Empty asks
	// for none by name: the server returns all of the model's outputs and
	// the first must be non-empty.
	Output string
}

// inputName is Input with its default.
func (t TritonTensors) inputName() string {
	if t.Input == "" {
		return DefaultTritonInput
	}
	return t.Input
}

// inferTensor is one tensor of a v2 request or reply. Data stays raw: a
// reply's logits or vectors are not worth decoding to check them.
type inferTensor struct {
	Name     string          `json:"name"`
	Shape    []int64         `json:"shape"`
	Datatype string          `json:"datatype"`
	Data     json.RawMessage `json:"data"`
}

// inferReply is the part of a v2 /infer reply the client reads.
type inferReply struct {
	ModelName string        `json:"model_name"`
	Outputs   []inferTensor `json:"outputs"`
	replyError
}

// renderTritonInfer builds an /infer body: the prompt as a [1, 1] BYTES
// tensor (a batch of one text), the output asked for by name when one is
// set, and Extra at the top level (an "id", "parameters", ...).
// MaxTokens and streaming mean nothing to a tensor model and are not sent.
func (b OpenAIBody) renderTritonInfer() map[string]any {
	m := map[string]any{"inputs": []map[string]any{{
		"name": b.Tensors.inputName(), "shape": []int{1, 1}, "datatype": "BYTES", "data": []string{b.flatPrompt()},
	}}}
	if b.Tensors.Output != "" {
		m["outputs"] = []map[string]any{{"name": b.Tensors.Output}}
	}
	maps.Copy(m, b.Extra)
	return m
}

// applyTritonInfer checks a whole /infer reply: an error object fails it,
// and the output tensor (TritonTensors.Output, or the first) must hold
// data. Like embeddings, its arrival is the first token and no content
// event is counted: the output is a tensor, not generated tokens.
func (cl *call) applyTritonInfer(b []byte, a arrival) error {
	var r inferReply
	if err := checkWholeReply("infer reply", b, &r); err != nil {
		return err
	}
	out, err := findOutput(r.Outputs, cl.c.tensors.Output)
	if err != nil {
		return err
	}
	if !tensorHasData(out.Data) {
		return &failure{record.ErrEmptyOutput, "output tensor " + out.Name + " has no data"}
	}
	cl.clock.first(cl.t, a)
	return nil
}

// findOutput picks the output tensor named want, or the first when want
// is empty; a reply without it names the outputs it did hold.
func findOutput(outs []inferTensor, want string) (*inferTensor, error) {
	if len(outs) == 0 {
		return nil, &failure{record.ErrEmptyOutput, "infer reply has no output tensor"}
	}
	if want == "" {
		return &outs[0], nil
	}
	names := make([]string, len(outs))
	for k := range outs {
		if outs[k].Name == want {
			return &outs[k], nil
		}
		names[k] = outs[k].Name
	}
	return nil, &failure{record.ErrEmptyOutput, "infer reply has no output tensor " + want +
		" (it holds " + strings.Join(names, ", ") + "): check target.triton.output"}
}

// tensorHasData reports whether a tensor's data is a non-empty array (or
// any other non-null value: a server may send a scalar).
func tensorHasData(raw json.RawMessage) bool {
	s := strings.TrimSpace(string(raw))
	return s != "" && s != "null" && s != "[]"
}
