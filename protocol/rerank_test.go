package protocol

import (
	"encoding/json"
	"errors"
	"strings"
	"time"

	"testing"

	"github.com/inferload/inferload/record"
)

func TestPoolingModelReplies(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		api    API
		status int
		reply  string
		err    record.ErrorKind
		usage  int // prompt tokens the trace reports; -1: none reported
	}{
		// Cohere/Jina shape: total_tokens is the prompt's when that is all vLLM gives.
		{"rerank ok", APIRerank, 200, `{"results":[{"index":1,"relevance_score":0.9},{"index":0,"relevance_score":0.1}],"usage":{"total_tokens":11}}`, record.ErrNone, 11},
		// prompt_tokens wins over total_tokens when both come.
		{"rerank prompt tokens", APIRerank, 200, `{"results":[{"index":0,"relevance_score":0.9}],"usage":{"prompt_tokens":8,"total_tokens":11}}`, record.ErrNone, 8},
		// top_n returns fewer results than documents: still a success.
		{"rerank top_n", APIRerank, 200, `{"results":[{"index":2,"relevance_score":0.9}]}`, record.ErrNone, -1},
		// TEI's bare list.
		{"rerank tei", APIRerank, 200, `[{"index":0,"score":0.5}]`, record.ErrNone, -1},
		// TEI's list that is not JSON is malformed.
		{"rerank tei garbage", APIRerank, 200, `[{"index":0,`, record.ErrMalformedEvent, -1},
		// A document index that was never sent (3 were) is a wrong reply.
		{"rerank index out of range", APIRerank, 200, `{"results":[{"index":3,"relevance_score":0.9}]}`, record.ErrMalformedEvent, -1},
		// A negative index likewise.
		{"rerank negative index", APIRerank, 200, `{"results":[{"index":-1,"relevance_score":0.9}]}`, record.ErrMalformedEvent, -1},
		// An index that is not a whole number.
		{"rerank fractional index", APIRerank, 200, `{"results":[{"index":0.5,"relevance_score":0.9}]}`, record.ErrMalformedEvent, -1},
		// No index at all.
		{"rerank no index", APIRerank, 200, `{"results":[{"relevance_score":0.9}]}`, record.ErrMalformedEvent, -1},
		// A score that is not a number does not decode: malformed.
		{"rerank string score", APIRerank, 200, `{"results":[{"index":0,"relevance_score":"high"}]}`, record.ErrMalformedEvent, -1},
		// No results at all is empty output.
		{"rerank empty", APIRerank, 200, `{"results":[],"usage":{"total_tokens":4}}`, record.ErrEmptyOutput, -1},
		// An error object inside a 200.
		{"rerank error body", APIRerank, 200, `{"error":{"message":"boom"}}`, record.ErrStreamErrorEvent, -1},
		// A 400 (vLLM: the model is not a cross-encoder) is http_4xx.
		{"rerank rejected", APIRerank, 400, `{"object":"error","message":"The model does not support Rerank (Score) API","code":400}`, record.ErrHTTP4xx, -1},
		// vLLM's score reply.
		{"score ok", APIScore, 200, `{"object":"list","data":[{"index":0,"object":"score","score":0.2},{"index":1,"object":"score","score":1}],"usage":{"prompt_tokens":21,"total_tokens":21}}`, record.ErrNone, 21},
		// A score reply read as rerank's results is not one: data is where scores are.
		{"score in results", APIScore, 200, `{"results":[{"index":0,"score":0.2}]}`, record.ErrEmptyOutput, -1},
		// A score without its number.
		{"score missing", APIScore, 200, `{"data":[{"index":0,"object":"score"}]}`, record.ErrMalformedEvent, -1},
		// A 503 is http_5xx.
		{"score overloaded", APIScore, 503, `{"message":"busy"}`, record.ErrHTTP5xx, -1},
		// vLLM's pooling reply.
		{"pooling ok", APIPooling, 200, `{"object":"list","data":[{"index":0,"object":"pooling","data":[0.1,0.2]}],"usage":{"prompt_tokens":5,"total_tokens":5}}`, record.ErrNone, 5},
		// Pooled data that is an empty list is no output.
		{"pooling empty data", APIPooling, 200, `{"data":[{"index":0,"data":[]}]}`, record.ErrEmptyOutput, -1},
		// Garbage is malformed, never a panic.
		{"pooling garbage", APIPooling, 200, `{"data":[`, record.ErrMalformedEvent, -1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			body, err := OpenAIBody{Model: "m", Prompt: "which capital?", Documents: []string{"a", "b", "c"}, MaxTokens: 9,
				Stream: true, IgnoreEOS: true, Extra: map[string]any{"top_n": 2}}.Render(tc.api)
			if err != nil {
				t.Fatal(err)
			}
			tr, req := wholeReplyTrace(t, tc.status, tc.reply, &Request{API: tc.api, Body: body, Documents: 3})
			checkPoolingRequest(t, tc.api, req)
			if tr.Err != tc.err {
				t.Fatalf("error %q (%s), want %q", tr.Err, tr.ErrMsg, tc.err)
			}
			if got := map[bool]int{true: tr.PromptTokens, false: -1}[tr.UsageReported]; got != tc.usage {
				t.Errorf("prompt tokens %d, want %d", got, tc.usage)
			}
			checkNoTokens(t, tr)
		})
	}
}

// checkPoolingRequest checks the path and that the body carries what the
// API takes (the query and documents under its own names) and nothing of
// generation.
func checkPoolingRequest(t *testing.T, api API, req seenRequest) {
	t.Helper()
	if req.Path != "/v1/"+string(api) || req.Header.Get("Accept") != "application/json" {
		t.Errorf("sent to %s with Accept %q", req.Path, req.Header.Get("Accept"))
	}
	want := map[API][2]string{APIRerank: {"query", "documents"}, APIScore: {"text_1", "text_2"}, APIPooling: {"input", ""}}[api]
	if req.Body[want[0]] != "which capital?" || req.Body["model"] != "m" || req.Body["top_n"] != float64(2) {
		t.Errorf("body %v", req.Body)
	}
	if docs, _ := req.Body[want[1]].([]any); want[1] != "" && len(docs) != 3 {
		t.Errorf("%s %v, want the 3 documents", want[1], req.Body[want[1]])
	}
	for _, k := range []string{"stream", "max_tokens", "ignore_eos", "messages", "prompt"} {
		if _, ok := req.Body[k]; ok {
			t.Errorf("body has %q: %v", k, req.Body)
		}
	}
}

// FuzzPoolingReplies feeds any bytes to the rerank, score and pooling
// reply checks: none may panic, every outcome is a classified kind, and a
// success holds what the checks promise (a score for a document that was
// sent).
func FuzzPoolingReplies(f *testing.F) {
	f.Add([]byte(`{"results":[{"index":1,"relevance_score":0.9}],"usage":{"total_tokens":11}}`), uint8(2))
	f.Add([]byte(`[{"index":0,"score":0.5}]`), uint8(1))
	f.Add([]byte(`{"data":[{"index":0,"object":"score","score":1}],"usage":{"prompt_tokens":3}}`), uint8(0))
	f.Add([]byte(`{"data":[{"index":0,"data":[[0.1]]}],"usage":{"prompt_tokens":3}}`), uint8(1))
	f.Add([]byte(`{"error":{"code":429,"message":"slow down"}}`), uint8(1))
	f.Fuzz(func(t *testing.T, b []byte, docs uint8) {
		for api, apply := range wholeReaders {
			cl := &call{t: &Trace{Sent: time.Unix(1, 0)}, req: &Request{API: api, Documents: int(docs)}}
			err := apply(cl, b, arrival{at: time.Unix(2, 0)})
			if err == nil {
				if cl.t.FirstToken.IsZero() {
					t.Fatalf("%s: success without the reply's arrival", api)
				}
				if api != APIPooling {
					checkScoredIndexes(t, api, b, int(docs))
				}
				continue
			}
			var fl *failure
			if !errors.As(err, &fl) || fl.kind == "" {
				t.Fatalf("%s: unclassified error %v", api, err)
			}
		}
	})
}

// checkScoredIndexes re-reads a reply the check accepted: each index is
// one of the documents sent.
func checkScoredIndexes(t *testing.T, api API, b []byte, docs int) {
	var r scoresReply
	if json.Unmarshal(b, &r) != nil {
		_ = json.Unmarshal(b, &r.Results) // TEI's list
	}
	rs := r.Results
	if api == APIScore {
		rs = r.Data
	}
	for _, s := range rs {
		if i := s.Index.v; !s.Index.ok || i < 0 || docs > 0 && i >= float64(docs) || i != float64(int(i)) {
			t.Fatalf("%s accepted %s with %d documents", api, b, docs)
		}
	}
}

// BenchmarkRerankReply is the client's cost of checking one rerank reply
// of 16 scored documents (vLLM's shape, usage included). One op is one
// reply: the pooling APIs have no per-token path.
func BenchmarkRerankReply(b *testing.B) {
	benchWholeReply(b, APIRerank, `{"id":"rerank-1","model":"m","usage":{"total_tokens":4127},"results":[`+
		strings.Repeat(`{"index":3,"relevance_score":0.99853515625},`, 15)+`{"index":0,"relevance_score":0.0005}]}`)
}

// BenchmarkScoreReply is BenchmarkRerankReply for vLLM's score reply.
func BenchmarkScoreReply(b *testing.B) {
	benchWholeReply(b, APIScore, `{"id":"score-1","object":"list","created":1,"model":"m","data":[`+
		strings.Repeat(`{"index":3,"object":"score","score":0.99853515625},`, 15)+
		`{"index":0,"object":"score","score":0.0005}],"usage":{"prompt_tokens":4127,"total_tokens":4127}}`)
}

// BenchmarkPoolingReply is the check of one pooling reply holding a
// 1,024-number vector, kept raw.
func BenchmarkPoolingReply(b *testing.B) {
	vec := strings.TrimSuffix(strings.Repeat("0.0123456789,", 1024), ",")
	benchWholeReply(b, APIPooling, `{"id":"pool-1","object":"list","data":[{"index":0,"object":"pooling","data":[`+vec+
		`]}],"usage":{"prompt_tokens":512,"total_tokens":512}}`)
}

func benchWholeReply(b *testing.B, api API, reply string) {
	body := []byte(reply)
	apply := wholeReaders[api]
	cl := &call{t: &Trace{}, req: &Request{API: api, Documents: 16}}
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		*cl.t = Trace{}
		cl.clock = recordClock{}
		if err := apply(cl, body, arrival{}); err != nil {
			b.Fatal(err)
		}
	}
}
