package engine

import (
	"context"
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/inferload/inferload/internal/enginetest"
	"github.com/inferload/inferload/protocol"
	"github.com/inferload/inferload/record"
	"github.com/inferload/inferload/sim"
	"github.com/inferload/inferload/workload"
)

// ragSource gives every request the same short question.
type ragSource struct{}

func (ragSource) Spec(i uint64) workload.Spec {
	return workload.Spec{Index: i, Class: "rag", Prompt: "what is a knee", InputTokens: 4, MaxTokens: 8, IgnoreEOS: true}
}

// simClient starts the tiny simulator profile and returns a client for it.
func simClient(t *testing.T) *protocol.OpenAI {
	t.Helper()
	_, url := enginetest.StartSim(t, sim.Config{Profile: enginetest.TinyProfile(t), Seed: 1})
	return openAIClient(t, url)
}

// openAIClient is an OpenAI client for baseURL, closed when the test ends.
func openAIClient(t *testing.T, baseURL string) *protocol.OpenAI {
	t.Helper()
	c, err := protocol.NewOpenAI(protocol.OpenAIOptions{BaseURL: baseURL})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

// modelStep renders a step of api with the spec's prompt.
func modelStep(name string, api protocol.API) ChainStep {
	return ChainStep{Name: name, Render: func(s workload.Spec) (*protocol.Request, error) {
		body, err := protocol.OpenAIBody{Prompt: s.Prompt, MaxTokens: s.MaxTokens, IgnoreEOS: s.IgnoreEOS,
			Stream: api == protocol.APIChat, IncludeUsage: true}.Render(api)
		return &protocol.Request{API: api, Body: body, Stream: api == protocol.APIChat, MaxTokens: s.MaxTokens, EventsCap: 8}, err
	}}
}

// runChain runs n closed-loop requests of a chain embeddings → retrieve
// (POST to path on a retrieval server) → chat against the simulator.
func runChain(t *testing.T, path string, n int) []*record.Result {
	t.Helper()
	docs := strings.Repeat("the knee is where latency turns upward ", 20)
	retr := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/search" {
			http.Error(w, "index down", http.StatusInternalServerError)
			return
		}
		_, _ = w.Write([]byte(`{"hits":[{"text":"` + docs + `"}]}`))
	}))
	t.Cleanup(retr.Close)
	call, err := protocol.NewHTTPCall(protocol.HTTPCallOptions{URL: retr.URL + path, Body: `{"q":"{{prompt}}"}`, Extract: "hits.*.text"})
	if err != nil {
		t.Fatal(err)
	}
	chain := &Chain{Steps: []ChainStep{modelStep("embed", protocol.APIEmbeddings),
		{Name: "retrieve", HTTP: call}, modelStep("chat", protocol.APIChat)}}
	rs := collect(t, Config{Client: simClient(t), Source: ragSource{}, Render: render, Shape: ClosedLoop{Users: 2},
		Requests: n, Chains: map[string]*Chain{"rag": chain}}, context.Background())
	if len(rs) != n {
		t.Fatalf("%d records, want %d", len(rs), n)
	}
	return rs
}

// TestChainAgainstSimulator: each request runs its three steps in order,
// the retrieved text reaches the chat prompt (the server counts more
// prompt tokens for chat than for the embeddings of the bare question),
// and the record times the chain end to end.
func TestChainAgainstSimulator(t *testing.T) {
	t.Parallel()
	for _, r := range runChain(t, "/search", 6) {
		if !r.OK() || len(r.Chain) != 3 {
			t.Fatalf("record %+v", r)
		}
		emb, ret, chat := r.Chain[0], r.Chain[1], r.Chain[2]
		if emb.Kind != "embeddings" || ret.Kind != StepKindHTTP || chat.Kind != "chat" || ret.Name != "retrieve" {
			t.Errorf("kinds %s %s %s", emb.Kind, ret.Kind, chat.Kind)
		}
		if emb.InputTokens == 0 || chat.InputTokens < emb.InputTokens+100 || chat.OutputTokens != 8 {
			t.Errorf("tokens: embeddings in %d, chat in %d out %d", emb.InputTokens, chat.InputTokens, chat.OutputTokens)
		}
		// Steps run one after the other, and the chain spans them all.
		if ret.SendUS < emb.SendUS+emb.DurUS || chat.SendUS < ret.SendUS+ret.DurUS || r.SendUS != emb.SendUS {
			t.Errorf("steps overlap: %+v", r.Chain)
		}
		if end := chat.SendUS + chat.DurUS; r.SendUS+r.E2EUS < end-1 || r.TTFTUS <= chat.SendUS-r.SendUS {
			t.Errorf("e2e %d ttft %d for steps %+v", r.E2EUS, r.TTFTUS, r.Chain)
		}
		// Events count from the record's send, so they lie within the chat step.
		if len(r.EventsUS) == 0 || r.SendUS+r.EventsUS[0] < chat.SendUS {
			t.Errorf("events %v, chat sent at %d", r.EventsUS, chat.SendUS)
		}
		if r.OutputTokens != 8 || !r.Stream || r.BytesIn <= chat.BytesIn {
			t.Errorf("out %d stream %v bytes in %d", r.OutputTokens, r.Stream, r.BytesIn)
		}
	}
}

// TestChainFailingMiddleStep: a retrieval that fails fails the chain with
// its error, the failed step is the last one recorded, and chat is never
// sent.
func TestChainFailingMiddleStep(t *testing.T) {
	t.Parallel()
	for _, r := range runChain(t, "/broken", 3) {
		if r.Error != record.ErrHTTP5xx || r.Status != 500 || len(r.Chain) != 2 {
			t.Fatalf("record %+v", r)
		}
		if r.Chain[0].Error != "" || r.Chain[1].Error != record.ErrHTTP5xx || r.Chain[1].Name != "retrieve" {
			t.Errorf("steps %+v", r.Chain)
		}
		if !strings.Contains(r.ErrorMsg, "chain step 2 (retrieve)") || r.TTFTUS != 0 || r.Stream {
			t.Errorf("message %q ttft %d", r.ErrorMsg, r.TTFTUS)
		}
	}
}

// ragConfig is a one-user, one-request run of ragSource on an in-memory
// client, for a test to add the class's chain or graph to.
func ragConfig() Config {
	return Config{Client: &serviceClient{}, Source: ragSource{}, Render: render, Shape: ClosedLoop{Users: 1}, Requests: 1}
}

// wantRejected checks that New refuses cfg with an error holding want.
func wantRejected(t *testing.T, cfg Config, want string) {
	t.Helper()
	if _, err := New(cfg); err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("chains %v graphs %v: error %v, want %q", cfg.Chains, cfg.Graphs, err, want)
	}
}

// TestChainSendsTraceContext: with trace context on, every model call of
// a chain carries the chain's trace id, each step its own span (the
// step's index in place of the attempt), and the record keeps the id.
func TestChainSendsTraceContext(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var got []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got = append(got, r.Header.Get("Traceparent"))
		mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"ok\"}}]}\n\ndata: [DONE]\n\n")
	}))
	t.Cleanup(srv.Close)
	c, err := protocol.NewOpenAI(protocol.OpenAIOptions{BaseURL: srv.URL + "/v1"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	chain := &Chain{Steps: []ChainStep{modelStep("plan", protocol.APIChat), modelStep("answer", protocol.APIChat)}}
	eng, err := New(Config{Client: c, Source: ragSource{}, Render: render, Shape: ClosedLoop{Users: 1}, Requests: 1,
		Chains: map[string]*Chain{"rag": chain}, TraceRun: "run-x", TraceIDOf: func(id uint64) uint64 { return id + 40 }})
	if err != nil {
		t.Fatal(err)
	}
	out := make(chan *record.Result, 1)
	if err := eng.Run(context.Background(), out); err != nil {
		t.Fatal(err)
	}
	r := <-out
	if !r.OK() {
		t.Fatalf("chain failed: %s %s", r.Error, r.ErrorMsg)
	}
	trace := record.TraceID("run-x", 40)
	if r.TraceID != hex.EncodeToString(trace[:]) {
		t.Errorf("record trace_id %q, want %x", r.TraceID, trace)
	}
	want := []string{record.TraceParent(trace, 0), record.TraceParent(trace, 1)}
	mu.Lock()
	defer mu.Unlock()
	if !slices.Equal(got, want) {
		t.Errorf("traceparents %q, want %q", got, want)
	}
}
