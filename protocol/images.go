package protocol

import (
	"encoding/json"

	"github.com/inferload/inferload/record"
)

// APIImages is OpenAI's image generation, POST {base}/images/generations:
// one non-streaming JSON reply whose data holds each image as b64_json or
// a url. Like embeddings it has no tokens: the reply's arrival is both
// the first "token" and the end, so TTFT equals the end-to-end latency
// and E2E is the figure to read.
const APIImages API = "images"

// imagesReply is the part of an image generation reply the client checks.
// The images stay raw: the client only needs to know they came.
type imagesReply struct {
	Data []struct {
		B64JSON json.RawMessage `json:"b64_json"`
		URL     json.RawMessage `json:"url"`
	} `json:"data"`
	replyError
}

// renderImages builds an image generation body: the prompt, the model,
// n = 1 and Extra (size, quality, steps, a LoRA name, ... passed through
// as they are, and able to override n). Streaming, max_tokens and
// ignore_eos mean nothing to this API and are left out.
func (b OpenAIBody) renderImages() map[string]any {
	return b.tokenlessBody(map[string]any{"prompt": b.Prompt, "n": 1})
}

// applyImages checks a whole image generation reply: an error in it, or
// no image at all, fails the request, so a server that answers 200 with
// nothing useful is not counted as a success.
func (cl *call) applyImages(b []byte, a arrival) error {
	var r imagesReply
	if err := checkWholeReply("images reply", b, &r); err != nil {
		return err
	}
	if len(r.Data) == 0 || (!present(r.Data[0].B64JSON) && !present(r.Data[0].URL)) {
		return &failure{record.ErrEmptyOutput, "images reply has no image (neither b64_json nor url)"}
	}
	cl.clock.first(cl.t, a)
	return nil
}

// present reports whether a raw JSON member holds a non-empty value.
func present(raw json.RawMessage) bool {
	s := string(raw)
	return s != "" && s != "null" && s != `""`
}
