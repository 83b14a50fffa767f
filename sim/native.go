package sim

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
)

// nativeRequest is what a native API's request says, translated to the
// OpenAI request the engine's limits are checked against.
type nativeRequest struct {
	req apiRequest
	api apiKind // apiChat for a conversation, apiCompletions for a prompt
	// details is TGI's parameters.details: the final event carries them.
	details bool
	// infer is a v2 /infer request's id and batch, nil for the others.
	infer *inferCall
	// scored is a rerank, score or pooling request's kind and documents,
	// nil for the others.
	scored *scoreCall
	// batch is true for a prompt of sequences the model reads apart
	// (Request.Batch): a reranker's pairs, a long audio's 30 s windows.
	batch bool
	// uncached opts the prompt out of prefix caching: its text stands
	// for what cannot be cached (audio), not for tokens.
	uncached bool
	// holds is true for an API whose server keeps the conversation for a
	// later request to continue (the Responses API's previous_response_id).
	holds bool
}

// Version is the server version the simulator's native APIs report
// (TGI's /info, Ollama's /api/version, Triton's /v2).
const Version = "0.0.0-inferload-sim"

// nativeHandler answers one native API's generation endpoint: parse
// translates the body, newDialect renders the replies.
func (s *Server) nativeHandler(parse func(r *http.Request, body []byte) (nativeRequest, *apiError),
	newDialect func(c *call) dialect) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		probe := &call{s: s, w: w, r: r, ctx: r.Context()}
		probe.d = newDialect(probe)
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBodyBytes))
		if err != nil {
			probe.writeError(badRequest("", "reading request body: %v", err))
			return
		}
		nr, aerr := parse(r, body)
		if aerr == nil {
			var g generation
			if g, aerr = settleGeneration(nr.req, nr.api, s.prof.forRequest(nr)); aerr == nil {
				g.details, g.infer, g.scored, g.batch = nr.details, nr.infer, nr.scored, nr.batch
				if nr.uncached {
					g.hashes = nil
				}
				if nr.holds {
					g.held = nr.req.Messages
				}
				c := s.newCall(w, r, g)
				if c.callsTool() {
					c.callTool()
				}
				c.d = newDialect(c)
				c.serve()
				return
			}
		}
		probe.writeError(aerr)
	}
}

// promptJSON is a prompt as the raw JSON an apiRequest holds.
func promptJSON(p string) json.RawMessage {
	b, _ := json.Marshal(p)
	return b
}

// fullText is the text of a call's first n tokens.
func (c *call) fullText(n int) string {
	var b strings.Builder
	for i := range n {
		b.WriteString(tokenText(c.words, i))
	}
	return b.String()
}

// appendJSONText appends s as a JSON string.
func appendJSONText(b []byte, s string) []byte {
	q, _ := json.Marshal(s)
	return append(b, q...)
}
