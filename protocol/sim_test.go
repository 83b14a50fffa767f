package protocol_test

import (
	"context"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/inferload/inferload/internal/enginetest"
	"github.com/inferload/inferload/protocol"
	"github.com/inferload/inferload/record"
	"github.com/inferload/inferload/sim"
)

// startSim runs the tiny simulator on 127.0.0.1 with fixed-length answers
// (each request runs to its max_tokens), so two clients sending the same
// request see the same number of tokens. It returns the server's root.
func startSim(t *testing.T) (root, model string) {
	t.Helper()
	srv, v1 := startProfile(t, tinyFixed(t), sim.Faults{})
	return strings.TrimSuffix(v1, "/v1"), srv.Profile().Model
}

// startProfile serves prof (seed 1) with faults for the test's duration,
// and returns the server and its OpenAI base URL.
func startProfile(t *testing.T, prof sim.Profile, faults sim.Faults) (*sim.Server, string) {
	t.Helper()
	return enginetest.StartSim(t, sim.Config{Profile: prof, Seed: 1, Faults: faults})
}

// tinyFixed is the tiny profile answering every request to its max_tokens.
func tinyFixed(t *testing.T) sim.Profile {
	t.Helper()
	prof := enginetest.TinyProfile(t)
	prof.OutputLength = sim.LengthDist{Kind: "fixed", Mean: 1000}
	return prof
}

func simClient(t *testing.T, opts protocol.OpenAIOptions) *protocol.OpenAI {
	t.Helper()
	c, err := protocol.NewOpenAI(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

func do(t *testing.T, c protocol.Client, req *protocol.Request) protocol.Trace {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var tr protocol.Trace
	c.Do(ctx, req, &tr)
	return tr
}

// The triton-infer client against the simulator's classification model:
// a success is one tensor reply whose arrival is both the first token and
// the end; wrong tensor names and an unknown model are the server's 400s,
// with its message.
func TestTritonInferAgainstSim(t *testing.T) {
	t.Parallel()
	root, model := startSim(t)
	tests := []struct {
		name    string
		model   string
		tensors protocol.TritonTensors
		err     record.ErrorKind
		msg     string
	}{
		// The defaults: input TEXT, the reply's first output.
		{"defaults", model, protocol.TritonTensors{}, record.ErrNone, ""},
		// The output asked for and checked by name.
		{"named output", model, protocol.TritonTensors{Input: "TEXT", Output: "LABEL"}, record.ErrNone, ""},
		// A wrong input name is the server's rejection, its message kept.
		{"wrong input", model, protocol.TritonTensors{Input: "PROMPT"}, record.ErrHTTP4xx, "unexpected inference input 'PROMPT'"},
		// So is asking for an output the model lacks.
		{"wrong output", model, protocol.TritonTensors{Output: "SCORES"}, record.ErrHTTP4xx, "unexpected inference output 'SCORES'"},
		// An unknown model.
		{"unknown model", "bert", protocol.TritonTensors{}, record.ErrHTTP4xx, "Request for unknown model: 'bert'"},
	}
	for _, tt := range tests {
		c := simClient(t, protocol.OpenAIOptions{BaseURL: root, Model: tt.model, Triton: tt.tensors})
		body, err := protocol.OpenAIBody{Prompt: "the film was a delight", MaxTokens: 16, Tensors: tt.tensors}.Render(protocol.APITritonInfer)
		if err != nil {
			t.Fatal(err)
		}
		got := do(t, c, &protocol.Request{API: protocol.APITritonInfer, Body: body, MaxTokens: 16})
		if got.Err != tt.err || !strings.Contains(got.ErrMsg, tt.msg) {
			t.Errorf("%s: %s %q, want %s %q", tt.name, got.Err, got.ErrMsg, tt.err, tt.msg)
			continue
		}
		if tt.err != record.ErrNone {
			continue
		}
		if got.FirstToken.IsZero() || !got.FirstToken.Equal(got.End) || got.ContentEvents != 0 || got.Status != 200 {
			t.Errorf("%s: first token %v end %v, %d content events, HTTP %d: want the reply's arrival as both, no events",
				tt.name, got.FirstToken, got.End, got.ContentEvents, got.Status)
		}
	}
}

// templated is one API of the simulator driven through the http API, and
// the dedicated client's request it must match.
type templated struct {
	name      string
	http      protocol.HTTPAPIOptions
	body      string
	dedicated protocol.API
	stream    bool
}

// The http API, templating the simulator's own APIs, sees what each
// dedicated client sees: the same number of content events and the same
// token count, streamed (SSE, NDJSON, chunks) and whole.
func TestHTTPTemplateMatchesDedicated(t *testing.T) {
	t.Parallel()
	root, model := startSim(t)
	const maxTokens = 12
	cases := []templated{
		{"tgi stream", protocol.HTTPAPIOptions{Path: "/generate_stream", Response: protocol.ResponseSSE,
			Text: "token.text", Tokens: "details.generated_tokens", Error: "error"},
			`{"inputs":"{{prompt}}","parameters":{"max_new_tokens":{{max_tokens}},"details":true}}`, protocol.APITGI, true},
		{"tgi whole", protocol.HTTPAPIOptions{Path: "/generate", Text: "generated_text", Tokens: "details.generated_tokens", Error: "error"},
			`{"inputs":"{{prompt}}","parameters":{"max_new_tokens":{{max_tokens}},"details":true}}`, protocol.APITGI, false},
		{"ollama ndjson", protocol.HTTPAPIOptions{Path: "/api/chat", Response: protocol.ResponseNDJSON,
			Text: "message.content", Tokens: "eval_count", Error: "error"},
			`{"model":"` + model + `","messages":[{"role":"user","content":"{{prompt}}"}],"stream":true,"options":{"num_predict":{{max_tokens}}}}`,
			protocol.APIOllama, true},
		{"openai sse", protocol.HTTPAPIOptions{Path: "/v1/completions", Response: protocol.ResponseSSE,
			Text: "choices.0.text", Tokens: "usage.completion_tokens", Error: "error.message"},
			`{"model":"` + model + `","prompt":"{{prompt}}","max_tokens":{{max_tokens}},"stream":true,"stream_options":{"include_usage":true}}`,
			protocol.APICompletions, true},
		{"torchserve chunked", protocol.HTTPAPIOptions{Path: "/predictions/" + model, Response: protocol.ResponseChunked},
			`{"prompt":"{{prompt}}","max_new_tokens":{{max_tokens}},"stream":true}`, protocol.APITorchServe, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tmpl, err := protocol.ParseTemplate(tc.body, protocol.EscapeJSON)
			if err != nil {
				t.Fatal(err)
			}
			opts := tc.http
			c := simClient(t, protocol.OpenAIOptions{BaseURL: root, Model: model, HTTP: &opts})
			fields := protocol.OpenAIBody{Model: model, Prompt: "tell me a story", MaxTokens: maxTokens, Template: tmpl,
				Stream: tc.stream, IncludeUsage: true}
			body, err := fields.Render(protocol.APIHTTP)
			if err != nil {
				t.Fatal(err)
			}
			got := do(t, c, &protocol.Request{API: protocol.APIHTTP, Body: body, MaxTokens: maxTokens, Stream: tc.stream})
			base := root
			if !tc.dedicated.Native() {
				base += "/v1"
			}
			dc := simClient(t, protocol.OpenAIOptions{BaseURL: base, Model: model})
			dbody, err := fields.Render(tc.dedicated)
			if err != nil {
				t.Fatal(err)
			}
			want := do(t, dc, &protocol.Request{API: tc.dedicated, Body: dbody, MaxTokens: maxTokens, Stream: tc.stream})
			if got.Err != record.ErrNone || want.Err != record.ErrNone {
				t.Fatalf("http: %s %q; dedicated: %s %q", got.Err, got.ErrMsg, want.Err, want.ErrMsg)
			}
			if tc.dedicated == protocol.APITorchServe {
				// Opaque chunks: events are reads, not tokens.
				if got.ContentEvents < 1 || got.ContentEvents > maxTokens {
					t.Errorf("%d content events from %d chunks", got.ContentEvents, maxTokens)
				}
				return
			}
			if got.ContentEvents != want.ContentEvents || got.CompletionTokens != want.CompletionTokens ||
				got.UsageReported != want.UsageReported {
				t.Errorf("http: %d events, %d tokens (usage %v); dedicated: %d events, %d tokens (usage %v)",
					got.ContentEvents, got.CompletionTokens, got.UsageReported,
					want.ContentEvents, want.CompletionTokens, want.UsageReported)
			}
			if tc.stream && got.ContentEvents != maxTokens || got.CompletionTokens != maxTokens {
				t.Errorf("%d content events, %d tokens: want %d of each streamed (%d tokens whole)",
					got.ContentEvents, got.CompletionTokens, maxTokens, maxTokens)
			}
			if got.FirstToken.IsZero() || got.FirstToken.After(got.End) {
				t.Errorf("first token %v, end %v", got.FirstToken, got.End)
			}
		})
	}
}

// The http API classifies the simulator's errors as the dedicated clients
// do: a rejected body is a 4xx with the message its error path names.
func TestHTTPTemplateErrorsAgainstSim(t *testing.T) {
	t.Parallel()
	root, model := startSim(t)
	opts := protocol.HTTPAPIOptions{Path: "/v2/models/" + model + "/infer", Text: "outputs.0.data.0", Error: "error"}
	c := simClient(t, protocol.OpenAIOptions{BaseURL: root, HTTP: &opts})
	tmpl, err := protocol.ParseTemplate(`{"inputs":[{"name":"WRONG","shape":[1,1],"datatype":"BYTES","data":["{{prompt}}"]}]}`, protocol.EscapeJSON)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := protocol.OpenAIBody{Prompt: "x", Template: tmpl}.Render(protocol.APIHTTP)
	got := do(t, c, &protocol.Request{API: protocol.APIHTTP, Body: body})
	if got.Err != record.ErrHTTP4xx || !strings.Contains(got.ErrMsg, "HTTP 400: unexpected inference input 'WRONG'") {
		t.Errorf("%s %q, want http_4xx with the server's message", got.Err, got.ErrMsg)
	}
}

// TestReasoningAgainstSim: the simulator reasons for a known number of
// tokens, one per step, so the client's channel figures have a truth: its
// first event is reasoning (TTFR = TTFT) and the answer starts after
// exactly that many events. When each event arrived is checked against
// the flushes the server made, recorded as it made them, not against the
// steps it meant to make: a loaded host wakes the simulator late, which
// stretches the phase past its nominal 200 ms (a lateness beyond the
// simulator's catch-up slack is never made up, so late steps add up) and
// lets its handler write several steps' tokens in one flush (gaps of
// nothing, which once pulled the median gap under a step). Rules, on the
// kernel's receive clock (converted to the monotonic one within a few µs;
// 50 µs allowed):
//   - every event is stamped no earlier than the flush that sent it began
//     and no later than the reply ended: never before its bytes were sent
//     (a read that took several flushes' bytes carries the last one's
//     stamp, and a loaded host's loopback may deliver bytes after the
//     server's flush returned, so its end bounds nothing);
//   - more than half are stamped inside their own flush's window: events
//     are stamped as they arrive, not as the reply is read later.
//
// A record falls back to the user clock when a read carried no fresh
// stamp (recordClock), which a loaded host makes happen now and then, so
// the request is sent up to 5 times for a reply on the kernel clock; on
// Linux none in 5 fails the test.
func TestReasoningAgainstSim(t *testing.T) {
	t.Parallel()
	const reasoning, answer, step = 50, 20, 4 * time.Millisecond
	prof := enginetest.TinyProfile(t)
	prof.Cost = sim.CostModel{StepOverhead: step}
	prof.OutputLength = sim.LengthDist{Kind: "fixed", Mean: answer}
	prof.ReasoningLength = sim.LengthDist{Kind: "fixed", Mean: reasoning}
	srv, v1, flushes := startRecordedProfile(t, prof)
	c := simClient(t, protocol.OpenAIOptions{BaseURL: v1, Model: srv.Profile().Model})
	body, err := protocol.OpenAIBody{Model: srv.Profile().Model, Prompt: "why?", MaxTokens: 200, Stream: true, IncludeUsage: true}.Render(protocol.APIChat)
	if err != nil {
		t.Fatal(err)
	}
	var tr protocol.Trace
	for range 5 {
		flushes.reset()
		tr = do(t, c, &protocol.Request{API: protocol.APIChat, Body: body, Stream: true, MaxTokens: 200})
		if tr.Err != record.ErrNone {
			t.Fatalf("%s: %s", tr.Err, tr.ErrMsg)
		}
		if tr.ReasoningEvents != reasoning || tr.ContentEvents != reasoning+answer || tr.ReasoningTokens != reasoning ||
			tr.CompletionTokens != reasoning+answer || tr.FirstReasoning != 1 || tr.FirstAnswer != reasoning+1 || tr.Interleaved {
			t.Fatalf("channels: %d reasoning of %d events (usage %d of %d), first reasoning %d, first answer %d, interleaved %v; want %d of %d from 1, answer at %d",
				tr.ReasoningEvents, tr.ContentEvents, tr.ReasoningTokens, tr.CompletionTokens, tr.FirstReasoning, tr.FirstAnswer, tr.Interleaved,
				reasoning, reasoning+answer, reasoning+1)
		}
		if tr.Clock == protocol.ClockKernel {
			break
		}
	}
	if tr.Clock != protocol.ClockKernel {
		// Linux stamps events in the kernel (stampconn_linux_test), so
		// there 5 replies on the user clock are a failure, never a skip;
		// elsewhere the flush windows bound no stamp the client has.
		if runtime.GOOS == "linux" {
			t.Fatalf("5 replies in a row on the %s clock on Linux: want kernel receive stamps", tr.Clock)
		}
		t.Skipf("events stamped on the %s clock (%s): the flush windows bound kernel receive stamps only", tr.Clock, runtime.GOOS)
	}
	own, failed := stampsInFlushes(t, tr, flushes)
	if failed {
		return
	}
	if 2*own <= len(tr.EventsUS) {
		t.Errorf("%d of %d events stamped inside their own flush's window: want more than half, stamped as they arrive", own, len(tr.EventsUS))
	}
	phase := time.Duration(tr.EventsUS[reasoning]-tr.EventsUS[0]) * time.Microsecond
	t.Logf("reasoning phase %v for %d × %v; %d of %d events in their own flush", phase, reasoning, step, own, len(tr.EventsUS))
}
