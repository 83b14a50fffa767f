package sim

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
)

// embeddingDims is the length of the simulator's vectors: enough to look
// like a reply, small enough that the endpoint costs next to nothing.
const embeddingDims = 8

// embeddingsRequest is the part of an OpenAI embeddings request the
// simulator reads. Input is a string or a list of strings.
type embeddingsRequest struct {
	Model string          `json:"model"`
	Input json.RawMessage `json:"input"`
}

// embeddings answers POST /v1/embeddings at once, outside the simulated
// GPU: an embeddings call in a chain is cheap next to generation, and its
// vectors are derived from the input's token hashes so the same input
// always gets the same vector.
func (s *Server) embeddings(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBodyBytes))
	if err != nil {
		writeAPIError(w, badRequest("", "reading request body: %v", err))
		return
	}
	inputs, tokens, aerr := s.parseEmbeddings(body)
	if aerr != nil {
		writeAPIError(w, aerr)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(s.embeddingsBody(inputs, tokens))
}

// parseEmbeddings checks an embeddings request and returns each input's
// token hashes and the total token count.
func (s *Server) parseEmbeddings(body []byte) ([][]uint64, int, *apiError) {
	var req embeddingsRequest
	if err := json.Unmarshal(body, &req); err != nil {
		return nil, 0, badRequest("", "invalid JSON body: %v", err)
	}
	if req.Model != "" && req.Model != s.prof.Model {
		return nil, 0, &apiError{status: http.StatusNotFound, typ: "invalid_request_error", param: "model", code: "model_not_found",
			msg: "The model `" + req.Model + "` does not exist."}
	}
	texts, aerr := embeddingInputs(req.Input)
	if aerr != nil {
		return nil, 0, aerr
	}
	out, total := make([][]uint64, len(texts)), 0
	for k, t := range texts {
		h := NewPromptHasher(1) // one block per token: the hashes are the tokens
		h.AddText(t)
		if h.Tokens() == 0 {
			return nil, 0, badRequest("input", "input %d is empty", k)
		}
		if h.Tokens() > s.prof.MaxModelLen {
			return nil, 0, tooLong("input", "input "+strconv.Itoa(k)+" has "+strconv.Itoa(h.Tokens())+
				" tokens, more than the model's maximum context length of "+strconv.Itoa(s.prof.MaxModelLen))
		}
		out[k], total = h.BlockHashes(), total+h.Tokens()
	}
	return out, total, nil
}

// embeddingInputs decodes "input": one string or a non-empty list.
func embeddingInputs(raw json.RawMessage) ([]string, *apiError) {
	var one string
	if err := json.Unmarshal(raw, &one); err == nil {
		return []string{one}, nil
	}
	var many []string
	if err := json.Unmarshal(raw, &many); err != nil || len(many) == 0 {
		return nil, badRequest("input", "input must be a string or a non-empty list of strings")
	}
	return many, nil
}

// embeddingsBody renders the reply: one vector per input and the usage.
func (s *Server) embeddingsBody(inputs [][]uint64, tokens int) []byte {
	var b bytes.Buffer
	b.WriteString(`{"object":"list","data":[`)
	for k, hashes := range inputs {
		if k > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`{"object":"embedding","index":`)
		b.WriteString(strconv.Itoa(k))
		b.WriteString(`,"embedding":`)
		b.Write(vector(hashes))
		b.WriteByte('}')
	}
	b.WriteString(`],"model":`)
	b.Write(s.modelJSON)
	b.WriteString(`,"usage":{"prompt_tokens":`)
	b.WriteString(strconv.Itoa(tokens))
	b.WriteString(`,"total_tokens":`)
	b.WriteString(strconv.Itoa(tokens))
	b.WriteString(`}}`)
	return b.Bytes()
}

// vector folds token hashes into embeddingDims numbers in [-1, 1).
func vector(hashes []uint64) []byte {
	var acc [embeddingDims]uint64
	for k, h := range hashes {
		acc[k%embeddingDims] ^= h
	}
	b := []byte{'['}
	for k, a := range acc {
		if k > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendFloat(b, float64(a>>11)/float64(1<<52)-1, 'f', 6, 64)
	}
	return append(b, ']')
}
