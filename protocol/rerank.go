package protocol

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/inferload/inferload/record"
)

// The pooling-model APIs: a query scored against documents, or texts
// pooled into vectors, answered in one JSON body. Like embeddings they
// generate nothing: the reply's arrival is both the first "token" and the
// end, so E2E is the figure, and the tokens are the prompt's only.
const (
	// APIRerank is POST {base}/rerank, Cohere's and Jina's shape as vLLM
	// serves it (/v1/rerank): a query and documents in, each document's
	// index and relevance_score out. TEI's bare [{index, score}] reply is
	// read too.
	APIRerank API = "rerank"
	// APIScore is vLLM's POST {base}/score (/v1/score): text_1 scored
	// against each text_2, data[].score out.
	APIScore API = "score"
	// APIPooling is vLLM's POST {root}/pooling: the prompt as input, the
	// model's pooled output (hidden states, a classifier's logits, a
	// reward) as data[].data. vLLM serves it at the server's root only.
	APIPooling API = "pooling"
)

// renderRerank builds a rerank body: the prompt as the query, the
// documents, the model and Extra (top_n, return_documents, ...).
func (b OpenAIBody) renderRerank() map[string]any {
	return b.tokenlessBody(map[string]any{"query": b.Prompt, "documents": b.documents()})
}

// renderScore builds a score body: the prompt as text_1 and the documents
// as text_2, which vLLM scores one against each.
func (b OpenAIBody) renderScore() map[string]any {
	return b.tokenlessBody(map[string]any{"text_1": b.Prompt, "text_2": b.documents()})
}

// renderPooling builds a pooling body: the prompt as input.
func (b OpenAIBody) renderPooling() map[string]any {
	return b.tokenlessBody(map[string]any{"input": b.Prompt})
}

// documents is Documents, never nil: a rerank without documents is sent
// as [] (which a server rejects) rather than null.
func (b OpenAIBody) documents() []string {
	if b.Documents == nil {
		return []string{}
	}
	return b.Documents
}

// scored is one document's score in a rerank or score reply: its index
// among the documents sent, and a score that must be a number.
type scored struct {
	Index          number `json:"index"`
	RelevanceScore number `json:"relevance_score"` // rerank (Cohere, Jina, vLLM)
	Score          number `json:"score"`           // score (vLLM), TEI's rerank
}

// number is a JSON number that may be absent, decoded without the
// allocation a pointer would cost per result; anything but a number
// fails the decode.
type number struct {
	v  float64
	ok bool
}

func (n *number) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		return nil
	}
	v, err := strconv.ParseFloat(string(b), 64) // no copy: the compiler sees through it
	if err != nil || len(b) == 0 || b[0] == '"' {
		return fmt.Errorf("%.20s is not a number", b)
	}
	n.v, n.ok = v, true
	return nil
}

// poolingUsage is the usage block of the pooling APIs: vLLM's rerank
// reports total_tokens only, its score and pooling prompt_tokens too.
type poolingUsage struct {
	PromptTokens *int `json:"prompt_tokens"`
	TotalTokens  *int `json:"total_tokens"`
}

// tokens is the prompt's token count the usage reports, ok false without.
func (u *poolingUsage) tokens() (int, bool) {
	switch {
	case u == nil:
		return 0, false
	case u.PromptTokens != nil:
		return *u.PromptTokens, true
	case u.TotalTokens != nil:
		return *u.TotalTokens, true
	}
	return 0, false
}

// scoresReply is a rerank reply (results) or a score reply (data).
type scoresReply struct {
	Results []scored      `json:"results"`
	Data    []scored      `json:"data"`
	Usage   *poolingUsage `json:"usage"`
	replyError
}

// applyRerank checks a whole rerank reply.
func (cl *call) applyRerank(b []byte, a arrival) error {
	var r scoresReply
	if bytes.HasPrefix(bytes.TrimLeft(b, " \t\r\n"), []byte("[")) {
		// TEI's /rerank answers with the bare list of results.
		if err := json.Unmarshal(b, &r.Results); err != nil {
			return &failure{record.ErrMalformedEvent, "rerank reply: " + err.Error()}
		}
	} else if err := checkWholeReply("rerank reply", b, &r); err != nil {
		return err
	}
	return cl.applyScores("rerank", r.Results, r.Usage, a)
}

// applyScore checks a whole score reply.
func (cl *call) applyScore(b []byte, a arrival) error {
	var r scoresReply
	if err := checkWholeReply("score reply", b, &r); err != nil {
		return err
	}
	return cl.applyScores("score", r.Data, r.Usage, a)
}

// applyScores checks the scores of a reply: at least one, each with a
// numeric score and the index of a document that was sent (top_n may
// return fewer than were sent, never others). It records the usage.
func (cl *call) applyScores(what string, rs []scored, u *poolingUsage, a arrival) error {
	if len(rs) == 0 {
		return &failure{record.ErrEmptyOutput, what + " reply has no scores"}
	}
	for k, r := range rs {
		i := r.Index.v
		switch {
		case !r.RelevanceScore.ok && !r.Score.ok:
			return &failure{record.ErrMalformedEvent, fmt.Sprintf("%s reply: result %d has no score", what, k)}
		case !r.Index.ok || i != float64(int(i)):
			return &failure{record.ErrMalformedEvent, fmt.Sprintf("%s reply: result %d has no index (a whole number)", what, k)}
		case i < 0 || cl.req.Documents > 0 && i >= float64(cl.req.Documents):
			return &failure{record.ErrMalformedEvent, fmt.Sprintf("%s reply: result %d scores document %v of the %d sent",
				what, k, i, cl.req.Documents)}
		}
	}
	cl.usePromptTokens(u)
	cl.clock.first(cl.t, a)
	return nil
}

// usePromptTokens records a pooling API's usage, when the reply had one.
func (cl *call) usePromptTokens(u *poolingUsage) {
	if n, ok := u.tokens(); ok {
		cl.t.UsageReported = true
		cl.t.PromptTokens = n
	}
}

// poolingReply is the part of a pooling reply the client checks; of the
// pooled data it keeps only whether they came.
type poolingReply struct {
	Data []struct {
		Data filled `json:"data"`
	} `json:"data"`
	Usage *poolingUsage `json:"usage"`
	replyError
}

// applyPooling checks a whole pooling reply: it fails without pooled
// data, so a 200 with nothing useful is not a success.
func (cl *call) applyPooling(b []byte, a arrival) error {
	var r poolingReply
	if err := checkWholeReply("pooling reply", b, &r); err != nil {
		return err
	}
	if len(r.Data) == 0 || !r.Data[0].Data {
		return &failure{record.ErrEmptyOutput, "pooling reply has no data"}
	}
	cl.usePromptTokens(r.Usage)
	cl.clock.first(cl.t, a)
	return nil
}

// wholeReaders maps the pooling-model APIs to their reply checks.
var wholeReaders = map[API]func(cl *call, b []byte, a arrival) error{
	APIRerank:  (*call).applyRerank,
	APIScore:   (*call).applyScore,
	APIPooling: (*call).applyPooling,
}

// filled notes whether a JSON member holds a value (not null, "" or []),
// without copying it: a pooled tensor can be thousands of numbers the
// client only needs to know arrived.
type filled bool

func (f *filled) UnmarshalJSON(b []byte) error {
	*f = filled(present(b) && string(b) != "[]")
	return nil
}
