package sim

import (
	"cmp"
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"strings"
)

// scoreCall is what a rerank, score or pooling request asked for beyond
// its prompt: which reply to render and how many documents it scores.
type scoreCall struct {
	kind string // "rerank", "score" or "pooling"
	docs int    // documents scored (rerank, score), texts pooled (pooling)
	topN int    // rerank's top_n, 0 for all
}

// The simulated pooling model's cost is the engine's: the request is one
// prompt of every token the model reads and one output token, so its
// latency grows with the text and with the batch as a cross-encoder's
// forward pass does. A reranker reads each (query, document) pair, so the
// query counts once per document: 8 documents of 200 tokens behind a
// 30-token query are 8 × (30 + 200) = 1840 prompt tokens, what vLLM's
// usage reports for the same request.

// forRequest is the profile a request is settled against. A pooling
// model reads each (query, document) pair, or each text, apart, and a
// speech model each 30 s window of audio, so the context bound is per
// sequence (parse checks it) and the joined prompt, one batch of them,
// is bounded by the KV cache instead: the engine admits a prompt only
// when its blocks fit, so a larger one would wait forever.
func (p Profile) forRequest(nr nativeRequest) Profile {
	if nr.batch {
		p.MaxModelLen = max(p.MaxModelLen, int(float64(p.NumGPUBlocks*p.BlockSize)*(1-2*p.KVWatermark)))
	}
	return p
}

// checkPairs answers vLLM's 400 when a (query, document) pair, read as
// one sequence, is longer than the model's context.
func checkPairs(param, query string, docs []string, maxLen int) *apiError {
	q := tokenCount(query)
	for k, d := range docs {
		if n := q + tokenCount(d); n > maxLen {
			return tooLong(param, "This model's maximum context length is "+strconv.Itoa(maxLen)+" tokens. However, the pair of the query and "+
				param+"["+strconv.Itoa(k)+"] has "+strconv.Itoa(n)+" tokens. Please reduce the length of the input.")
		}
	}
	return nil
}

// tokenCount is the simulated tokenizer's count of s.
func tokenCount(s string) int {
	h := NewPromptHasher(1)
	h.AddText(s)
	return h.Tokens()
}

// rerankRequest is the Cohere/Jina rerank body vLLM serves at /v1/rerank.
type rerankRequest struct {
	Model     string          `json:"model"`
	Query     *string         `json:"query"`
	Documents json.RawMessage `json:"documents"`
	TopN      int             `json:"top_n"`
}

// scoreRequest is vLLM's /v1/score body.
type scoreRequest struct {
	Model string          `json:"model"`
	Text1 json.RawMessage `json:"text_1"`
	Text2 json.RawMessage `json:"text_2"`
}

// parseRerank translates a rerank body for a model of maxLen tokens.
func parseRerank(maxLen int) func(*http.Request, []byte) (nativeRequest, *apiError) {
	return func(_ *http.Request, body []byte) (nativeRequest, *apiError) { return rerankBody(body, maxLen) }
}

func rerankBody(body []byte, maxLen int) (nativeRequest, *apiError) {
	var r rerankRequest
	if err := json.Unmarshal(body, &r); err != nil {
		return nativeRequest{}, badRequest("", "invalid JSON body: %v", err)
	}
	if r.Query == nil || *r.Query == "" {
		return nativeRequest{}, badRequest("query", "query must be a non-empty string")
	}
	docs, aerr := textList("documents", r.Documents)
	if aerr != nil {
		return nativeRequest{}, aerr
	}
	if r.TopN < 0 {
		return nativeRequest{}, badRequest("top_n", "top_n must be 0 (all) or more")
	}
	if aerr := checkPairs("documents", *r.Query, docs, maxLen); aerr != nil {
		return nativeRequest{}, aerr
	}
	return pairsRequest(r.Model, *r.Query, docs, &scoreCall{kind: "rerank", docs: len(docs), topN: r.TopN}), nil
}

// parseScore translates a score body (text_1 one text, text_2 one or
// more) for a model of maxLen tokens.
func parseScore(maxLen int) func(*http.Request, []byte) (nativeRequest, *apiError) {
	return func(_ *http.Request, body []byte) (nativeRequest, *apiError) { return scoreBody(body, maxLen) }
}

func scoreBody(body []byte, maxLen int) (nativeRequest, *apiError) {
	var r scoreRequest
	if err := json.Unmarshal(body, &r); err != nil {
		return nativeRequest{}, badRequest("", "invalid JSON body: %v", err)
	}
	var query string
	if json.Unmarshal(r.Text1, &query) != nil || query == "" {
		return nativeRequest{}, badRequest("text_1", "text_1 must be a non-empty string")
	}
	docs, aerr := textList("text_2", r.Text2)
	if aerr != nil {
		return nativeRequest{}, aerr
	}
	if aerr := checkPairs("text_2", query, docs, maxLen); aerr != nil {
		return nativeRequest{}, aerr
	}
	return pairsRequest(r.Model, query, docs, &scoreCall{kind: "score", docs: len(docs)}), nil
}

// parsePooling translates a pooling body for a model of maxLen tokens:
// input one text or a list, as embeddings' input, each text within the
// context.
func parsePooling(maxLen int) func(*http.Request, []byte) (nativeRequest, *apiError) {
	return func(_ *http.Request, body []byte) (nativeRequest, *apiError) { return poolingBody(body, maxLen) }
}

func poolingBody(body []byte, maxLen int) (nativeRequest, *apiError) {
	var r embeddingsRequest
	if err := json.Unmarshal(body, &r); err != nil {
		return nativeRequest{}, badRequest("", "invalid JSON body: %v", err)
	}
	texts, aerr := embeddingInputs(r.Input)
	if aerr != nil {
		return nativeRequest{}, aerr
	}
	if aerr := checkPairs("input", "", texts, maxLen); aerr != nil {
		return nativeRequest{}, aerr
	}
	one := 1
	req := apiRequest{Model: r.Model, Prompt: promptJSON(strings.Join(texts, "\n")), MaxTokens: &one, IgnoreEOS: true}
	return nativeRequest{req: req, api: apiCompletions, scored: &scoreCall{kind: "pooling", docs: len(texts)}, batch: true}, nil
}

// pairsRequest is a cross-encoder's work: each (query, document) pair
// read once, as one prompt with one output token.
func pairsRequest(model, query string, docs []string, sc *scoreCall) nativeRequest {
	var b strings.Builder
	for _, d := range docs {
		b.WriteString(query)
		b.WriteByte('\n')
		b.WriteString(d)
		b.WriteByte('\n')
	}
	one := 1
	req := apiRequest{Model: model, Prompt: promptJSON(b.String()), MaxTokens: &one, IgnoreEOS: true}
	return nativeRequest{req: req, api: apiCompletions, scored: sc, batch: true}
}

// textList decodes a non-empty list of non-empty strings (or one string).
func textList(param string, raw json.RawMessage) ([]string, *apiError) {
	texts, aerr := embeddingInputs(raw)
	if aerr != nil {
		return nil, badRequest(param, "%s must be a string or a non-empty list of strings", param)
	}
	for k, t := range texts {
		if t == "" {
			return nil, badRequest(param, "%s[%d] is empty", param, k)
		}
	}
	return texts, nil
}

// poolingDialect is the replies of the rerank, score and pooling APIs:
// one JSON body, errors in OpenAI's shape. They never stream.
type poolingDialect struct {
	unstreamed
	c *call
}

func newPoolingDialect(c *call) dialect { return poolingDialect{c: c} }

func (poolingDialect) errorBody(e *apiError) []byte { return e.body() }

// whole renders the reply of the call's kind.
func (d poolingDialect) whole(h http.Header, _ string, _ int) []byte {
	h.Set("Content-Type", "application/json")
	c := d.c
	sc := c.g.scored
	switch sc.kind {
	case "rerank":
		return d.rerank(sc)
	case "score":
		return d.score(sc)
	}
	return d.pooling(sc)
}

// relevance is document i's score in [0, 1), fixed by the call's draw so
// the same request gets the same scores.
func (d poolingDialect) relevance(i int) float64 {
	return float64(splitmix(d.c.words+uint64(i))>>11) / float64(1<<53)
}

// rerank renders {"id", "model", "usage": {"total_tokens"}, "results"},
// the results by falling relevance, cut to top_n.
func (d poolingDialect) rerank(sc *scoreCall) []byte {
	order := make([]int, sc.docs)
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int {
		return -cmp.Compare(d.relevance(a), d.relevance(b))
	})
	if sc.topN > 0 && sc.topN < len(order) {
		order = order[:sc.topN]
	}
	b := []byte(`{"id":"rerank-` + strconv.FormatUint(d.c.words, 16) + `","model":`)
	b = append(b, d.c.s.modelJSON...)
	b = append(b, `,"usage":{"total_tokens":`...)
	b = strconv.AppendInt(b, int64(d.c.g.promptTokens), 10)
	b = append(b, `},"results":[`...)
	for k, i := range order {
		if k > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"index":`...)
		b = strconv.AppendInt(b, int64(i), 10)
		b = append(b, `,"relevance_score":`...)
		b = strconv.AppendFloat(b, d.relevance(i), 'f', 6, 64)
		b = append(b, '}')
	}
	return append(b, "]}"...)
}

// score renders vLLM's {"id", "object": "list", "model", "data": [{index,
// object: score, score}], "usage"}, in the documents' order.
func (d poolingDialect) score(sc *scoreCall) []byte {
	b := d.listHead("score")
	for i := range sc.docs {
		b = append(listItem(b, i, "score"), `,"score":`...)
		b = strconv.AppendFloat(b, d.relevance(i), 'f', 6, 64)
		b = append(b, '}')
	}
	return d.listUsage(b)
}

// pooling renders vLLM's pooling list: one small vector a text.
func (d poolingDialect) pooling(sc *scoreCall) []byte {
	b := d.listHead("pool")
	for i := range sc.docs {
		b = append(listItem(b, i, "pooling"), `,"data":`...)
		b = append(b, vector([]uint64{d.c.words + uint64(i)})...)
		b = append(b, '}')
	}
	return d.listUsage(b)
}

// listItem opens element i of a list's data, {"index":i,"object":object,
// after a comma but for the first.
func listItem(b []byte, i int, object string) []byte {
	if i > 0 {
		b = append(b, ',')
	}
	b = append(b, `{"index":`...)
	b = strconv.AppendInt(b, int64(i), 10)
	return append(append(append(b, `,"object":"`...), object...), '"')
}

func (d poolingDialect) listHead(prefix string) []byte {
	b := []byte(`{"id":"` + prefix + `-` + strconv.FormatUint(d.c.words, 16) + `","object":"list","model":`)
	b = append(b, d.c.s.modelJSON...)
	return append(b, `,"data":[`...)
}

func (d poolingDialect) listUsage(b []byte) []byte {
	n := strconv.Itoa(d.c.g.promptTokens)
	return append(b, `],"usage":{"prompt_tokens":`+n+`,"total_tokens":`+n+`,"completion_tokens":0}}`...)
}

// splitmix is SplitMix64's finaliser: neighbouring inputs, unrelated
// outputs.
func splitmix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
	x = (x ^ x>>27) * 0x94d049bb133111eb
	return x ^ x>>31
}
