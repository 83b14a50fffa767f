package sim

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// The simulated classification model behind /v2/models/{model}/infer: a
// BERT-style classifier with one BYTES input and one BYTES output, the
// shape of Triton's Python-backend text classification examples.
const (
	inferInput  = "TEXT"
	inferOutput = "LABEL"
)

// inferLabels are the classes the simulated classifier answers with.
var inferLabels = [...]string{"positive", "negative", "neutral"}

// inferCall is what a v2 /infer request asked for beyond its prompt: the
// id to echo and how many texts (the batch) to label.
type inferCall struct {
	id    string
	batch int
}

// inferRequest is a KServe v2 inference request body.
type inferRequest struct {
	ID     string `json:"id"`
	Inputs []struct {
		Name     string          `json:"name"`
		Shape    []int64         `json:"shape"`
		Datatype string          `json:"datatype"`
		Data     json.RawMessage `json:"data"`
	} `json:"inputs"`
	Outputs []struct {
		Name string `json:"name"`
	} `json:"outputs"`
}

// parseTritonInfer translates a /v2/models/{model}/infer body. Each text
// of the input tensor is one row of the batch; the engine sees them as one
// prompt of their summed length and one output token (the label), so the
// latency grows with the texts' length and with the batch as a real
// encoder's does: its cost is the forward pass over every token.
func parseTritonInfer(model string) func(*http.Request, []byte) (nativeRequest, *apiError) {
	return func(r *http.Request, body []byte) (nativeRequest, *apiError) {
		var t inferRequest
		if aerr := decodeTriton(r, body, model, &t); aerr != nil {
			return nativeRequest{}, aerr
		}
		texts, aerr := inferTexts(&t, model)
		if aerr != nil {
			return nativeRequest{}, aerr
		}
		one := 1
		req := apiRequest{Prompt: promptJSON(strings.Join(texts, "\n")), MaxTokens: &one, IgnoreEOS: true}
		return nativeRequest{req: req, api: apiCompletions, infer: &inferCall{id: t.ID, batch: len(texts)}}, nil
	}
}

// inferTexts checks the request's tensors against the model's and returns
// the input tensor's texts, with Triton's messages for a mismatch.
func inferTexts(t *inferRequest, model string) ([]string, *apiError) {
	for _, o := range t.Outputs {
		if o.Name != inferOutput {
			return nil, badRequest("", "unexpected inference output '%s' for model '%s'", o.Name, model)
		}
	}
	if len(t.Inputs) != 1 {
		return nil, badRequest("", "expected 1 inputs but got %d inputs for model '%s'", len(t.Inputs), model)
	}
	in := t.Inputs[0]
	if in.Name != inferInput {
		return nil, badRequest("", "unexpected inference input '%s' for model '%s'", in.Name, model)
	}
	if in.Datatype != "BYTES" {
		return nil, badRequest("", "inference input '%s' data-type is '%s', but model '%s' expects 'BYTES'", in.Name, in.Datatype, model)
	}
	texts, err := flatStrings(in.Data)
	if err != nil || len(texts) == 0 {
		return nil, badRequest("", "failed to parse input '%s': want a non-empty array of strings", in.Name)
	}
	return texts, nil
}

// flatStrings reads a tensor's data, flat or nested one level (both are
// allowed by the protocol), as strings.
func flatStrings(raw json.RawMessage) ([]string, error) {
	var flat []string
	if err := json.Unmarshal(raw, &flat); err == nil {
		return flat, nil
	}
	var nested [][]string
	if err := json.Unmarshal(raw, &nested); err != nil {
		return nil, err
	}
	flat = flat[:0] // the failed flat decode may have filled some
	for _, row := range nested {
		flat = append(flat, row...)
	}
	return flat, nil
}

// tritonInferDialect is the v2 /infer reply: one JSON body with the label
// tensor; errors as {"error": "..."}. The endpoint never streams.
type tritonInferDialect struct {
	unstreamed
	c *call
}

func newTritonInferDialect(c *call) dialect { return tritonInferDialect{c: c} }

// whole renders {"id", "model_name", "model_version", "outputs": [LABEL]},
// one label a text, picked from the answer's place in the vocabulary so
// the same request gets the same labels.
func (d tritonInferDialect) whole(h http.Header, _ string, _ int) []byte {
	h.Set("Content-Type", "application/json")
	c := d.c
	in := c.g.infer
	if in == nil {
		in = &inferCall{batch: 1}
	}
	b := []byte(`{`)
	if in.id != "" {
		b = append(appendJSONText(append(b, `"id":`...), in.id), ',')
	}
	b = fmt.Appendf(b, `"model_name":%s,"model_version":"1","outputs":[{"name":%q,"datatype":"BYTES","shape":[%d,1],"data":[`,
		c.s.modelJSON, inferOutput, in.batch)
	for i := range in.batch {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendJSONText(b, inferLabels[(c.words+uint64(i))%uint64(len(inferLabels))])
	}
	return append(b, "]}]}"...)
}

// errorBody is the protocol's {"error": "..."}.
func (tritonInferDialect) errorBody(e *apiError) []byte {
	return append(appendJSONText([]byte(`{"error":`), e.msg), '}')
}
