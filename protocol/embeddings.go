package protocol

import (
	"encoding/json"
	"maps"

	"github.com/inferload/inferload/record"
)

// APIEmbeddings is POST {base}/embeddings: one non-streaming JSON reply
// holding the vectors and usage.prompt_tokens. Its requests have no
// output tokens; the reply's arrival is both the first "token" and the
// end, so TTFT equals the end-to-end latency.
const APIEmbeddings API = "embeddings"

// embeddingsReply is the part of an embeddings reply the client checks.
// Vectors stay raw: decoding thousands of floats would cost more client
// CPU than the measurement is worth.
type embeddingsReply struct {
	Data []struct {
		Embedding json.RawMessage `json:"embedding"`
	} `json:"data"`
	Usage *struct {
		PromptTokens int `json:"prompt_tokens"`
	} `json:"usage"`
	replyError
}

// renderEmbeddings builds an embeddings body: the prompt as "input", the
// model, and Extra (dimensions, encoding_format, ...). Streaming,
// max_tokens and ignore_eos mean nothing to this API and are left out.
func (b OpenAIBody) renderEmbeddings() map[string]any {
	return b.tokenlessBody(map[string]any{"input": b.Prompt})
}

// tokenlessBody completes the body of an API without tokens (embeddings,
// images): the model when one is set, and Extra over both.
func (b OpenAIBody) tokenlessBody(m map[string]any) map[string]any {
	if b.Model != "" {
		m["model"] = b.Model
	}
	maps.Copy(m, b.Extra)
	return m
}

// applyEmbeddings checks a whole embeddings reply and records its usage.
// It fails when the reply holds an error or no vector, so a server that
// answers 200 with nothing useful is not counted as a success.
func (cl *call) applyEmbeddings(b []byte, a arrival) error {
	var r embeddingsReply
	if err := checkWholeReply("embeddings reply", b, &r); err != nil {
		return err
	}
	if len(r.Data) == 0 || len(r.Data[0].Embedding) == 0 {
		return &failure{record.ErrEmptyOutput, "embeddings reply has no vector"}
	}
	if r.Usage != nil {
		cl.t.UsageReported = true
		cl.t.PromptTokens = r.Usage.PromptTokens
	}
	cl.clock.first(cl.t, a)
	return nil
}
