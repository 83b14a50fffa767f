package sim

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"io"
	"math/rand/v2"
	"net/http"
	"strconv"
	"time"
)

// The vector database a RAG chain's retrieval step calls, so a whole
// chain (embed, search, answer) runs against one simulator: Qdrant's
// search endpoint, POST /collections/{collection}/points/search, answered
// in Qdrant's shape:
//
//	{"result": [{"id": 0, "version": 0, "score": 0.93, "payload": {"text": "..."}}, ...],
//	 "status": "ok", "time": 0.0021}
//
// with limit (default searchDefaultLimit) passages of searchPassageWords
// words each, chosen by the request's bytes, so the same question
// retrieves the same passages. A search takes searchBase + searchPerHit ×
// limit (an HNSW lookup on a warm index: milliseconds, not the model's
// hundreds), divided by the server's speedup, and does not queue: the
// database is not what a chain's load test measures. The body's vector,
// query, filter and other fields are accepted and ignored. Faults apply
// as on the model's endpoints.
const (
	searchBase         = 2 * time.Millisecond
	searchPerHit       = 100 * time.Microsecond
	searchDefaultLimit = 3
	searchMaxLimit     = 100
	searchPassageWords = 96 // about 128 tokens, a typical chunk
)

// searchRequest is the part of a search the simulator reads.
type searchRequest struct {
	Limit *int `json:"limit"`
}

// vectorSearch answers POST /collections/{collection}/points/search.
func (s *Server) vectorSearch(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBodyBytes))
	if err != nil {
		writeSearchError(w, http.StatusBadRequest, "reading request body: "+err.Error())
		return
	}
	var req searchRequest
	if err := json.Unmarshal(body, &req); err != nil {
		writeSearchError(w, http.StatusBadRequest, "Format error in JSON body: "+err.Error())
		return
	}
	limit := searchDefaultLimit
	if req.Limit != nil {
		limit = *req.Limit
	}
	if limit < 1 || limit > searchMaxLimit {
		writeSearchError(w, http.StatusBadRequest, fmt.Sprintf("Validation error in JSON body: limit must be 1 to %d, got %d", searchMaxLimit, limit))
		return
	}
	c, ok := s.wholeCall(w, r)
	if !ok {
		return
	}
	cost := searchBase + time.Duration(limit)*searchPerHit
	if !c.pause(time.Duration(float64(cost) / s.speedup)) {
		return
	}
	w.Header().Set("Content-Type", "application/json")
	h := fnv.New64a()
	_, _ = h.Write(body)
	reply := searchReply(r.PathValue("collection"), h.Sum64()^s.seed, limit, cost)
	c.writeWhole(reply, func(e *apiError) { writeSearchError(w, e.status, e.msg) })
}

// searchReply is a search's answer: limit passages drawn by key.
func searchReply(collection string, key uint64, limit int, took time.Duration) []byte {
	rng := rand.New(rand.NewPCG(key, 0x5ea4c4))
	b := []byte(`{"result":[`)
	for k := range limit {
		if k > 0 {
			b = append(b, ',')
		}
		id := rng.Uint64N(1 << 20)
		score := 0.95 - 0.05*float64(k) - 0.01*rng.Float64()
		b = fmt.Appendf(b, `{"id":%d,"version":0,"score":%.4f,"payload":{"text":`, id, score)
		b = append(b, jsonString(passage(collection, id, rng))...)
		b = append(b, "}}"...)
	}
	b = append(b, `],"status":"ok","time":`...)
	b = strconv.AppendFloat(b, took.Seconds(), 'f', 6, 64)
	return append(b, '}')
}

// passage is a stored chunk's text: searchPassageWords words.
func passage(collection string, id uint64, rng *rand.Rand) string {
	b := fmt.Appendf(nil, "[%s #%d]", collection, id)
	for range searchPassageWords {
		b = append(b, ' ')
		b = append(b, searchWords[rng.IntN(len(searchWords))]...)
	}
	return string(b)
}

// searchWords is the passages' vocabulary.
var searchWords = [...]string{"the", "model", "server", "batch", "latency", "token", "cache", "request",
	"memory", "queue", "prefill", "decode", "throughput", "user", "load", "gpu", "kernel", "prompt",
	"answer", "context", "retrieval", "index", "vector", "document"}

// writeSearchError answers as Qdrant does: {"status": {"error": msg}}.
func writeSearchError(w http.ResponseWriter, code int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_, _ = fmt.Fprintf(w, `{"status":{"error":%s},"time":0}`, jsonString(msg))
}
