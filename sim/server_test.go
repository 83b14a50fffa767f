package sim

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// newTestServer runs the "tiny" profile (1 ms steps) behind httptest.
func newTestServer(t *testing.T, edit func(*Config)) (*Server, string, *http.Client) {
	t.Helper()
	p, _ := LookupProfile("tiny")
	cfg := Config{Profile: p, Seed: 1}
	if edit != nil {
		edit(&cfg)
	}
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s.Handler())
	tr := &http.Transport{}
	t.Cleanup(func() {
		s.Close()
		ts.Close()
		tr.CloseIdleConnections()
	})
	return s, ts.URL, &http.Client{Transport: tr, Timeout: 30 * time.Second}
}

// reply is what a client saw of one request.
type reply struct {
	status    int
	body      []byte        // the body of a non-streaming reply
	events    []string      // SSE data payloads, in order
	maxGap    time.Duration // the longest wait between two events, as read
	firstByte time.Duration // until the response headers arrived
	total     time.Duration // until the whole reply was read
	err       error         // transport or read error
}

func post(ctx context.Context, c *http.Client, url, body string) reply {
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	start := time.Now()
	resp, err := c.Do(req)
	r := reply{firstByte: time.Since(start), err: err}
	if err != nil {
		return r
	}
	defer resp.Body.Close()
	r.status = resp.StatusCode
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		r.body, r.err = io.ReadAll(resp.Body)
		return r
	}
	sc := bufio.NewScanner(resp.Body)
	last := time.Now()
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		r.maxGap = max(r.maxGap, time.Since(last))
		last = time.Now()
		r.events = append(r.events, data)
	}
	r.err = sc.Err()
	r.total = time.Since(start)
	return r
}

// chunk is the union of the chat and completions chunk fields tests read.
type chunk struct {
	ID      string `json:"id"`
	Object  string `json:"object"`
	Model   string `json:"model"`
	Choices []struct {
		Text  *string `json:"text"`
		Delta *struct {
			Role    string  `json:"role"`
			Content *string `json:"content"`
		} `json:"delta"`
		FinishReason *string `json:"finish_reason"`
	} `json:"choices"`
	Usage *struct {
		PromptTokens     int `json:"prompt_tokens"`
		CompletionTokens int `json:"completion_tokens"`
		TotalTokens      int `json:"total_tokens"`
	} `json:"usage"`
	Error *struct {
		Message string `json:"message"`
		Type    string `json:"type"`
	} `json:"error"`
}

// transcript classifies a stream's events, one letter each: R role, T
// token, F finish, U usage, E error, D [DONE], ! not JSON.
func transcript(t *testing.T, events []string) (string, []chunk) {
	t.Helper()
	var b strings.Builder
	var chunks []chunk
	for _, ev := range events {
		if ev == "[DONE]" {
			b.WriteByte('D')
			continue
		}
		var c chunk
		if err := json.Unmarshal([]byte(ev), &c); err != nil {
			b.WriteByte('!')
			continue
		}
		chunks = append(chunks, c)
		b.WriteByte(classify(c))
	}
	return b.String(), chunks
}

func classify(c chunk) byte {
	switch {
	case c.Error != nil:
		return 'E'
	case c.Usage != nil && len(c.Choices) == 0:
		return 'U'
	case len(c.Choices) != 1:
		return '?'
	case c.Choices[0].FinishReason != nil:
		return 'F'
	case c.Choices[0].Delta != nil && c.Choices[0].Delta.Role != "" && c.Choices[0].Delta.Content == nil:
		return 'R'
	case c.Choices[0].Text != nil || (c.Choices[0].Delta != nil && c.Choices[0].Delta.Content != nil):
		return 'T'
	}
	return '?'
}

func TestEndpoints(t *testing.T) {
	t.Parallel()
	_, url, c := newTestServer(t, nil)
	tests := []struct {
		method, path string
		wantStatus   int
		wantBody     string
	}{
		{"GET", "/health", 200, ""},                                 // liveness, empty body as vLLM
		{"GET", "/v1/models", 200, `"id":"tiny-sim"`},               // the served model
		{"GET", "/v1/models", 200, `"max_model_len":2048`},          // with its context length
		{"GET", "/metrics", 200, "vllm:num_requests_running"},       // Prometheus text
		{"GET", "/metrics", 200, "DCGM_FI_DEV_GPU_UTIL"},            // with GPU figures
		{"GET", "/v1/chat/completions", 405, ""},                    // generation is POST only
		{"POST", "/v1/models", 405, ""},                             // listing is GET only
		{"GET", "/v1/moderations", 404, ""},                         // not simulated
		{"POST", "/v1/completions", 400, `"invalid_request_error"`}, // empty body is a client error
	}
	for _, tt := range tests {
		req, _ := http.NewRequest(tt.method, url+tt.path, nil)
		resp, err := c.Do(req)
		if err != nil {
			t.Fatalf("%s %s: %v", tt.method, tt.path, err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tt.wantStatus || !strings.Contains(string(body), tt.wantBody) {
			t.Errorf("%s %s: %d %q; want %d containing %q", tt.method, tt.path, resp.StatusCode, body, tt.wantStatus, tt.wantBody)
		}
	}
}

func TestStreamShape(t *testing.T) {
	t.Parallel()
	_, url, c := newTestServer(t, nil)
	tests := []struct {
		name, path, body string
		want             string // transcript
		wantObject       string
		wantUsage        bool
	}{
		{
			// Chat with usage: role, 12 tokens, finish, usage, [DONE].
			name: "chat with usage", path: "/v1/chat/completions",
			body:       `{"model":"tiny-sim","messages":[{"role":"user","content":"one two three four five"}],"max_tokens":12,"ignore_eos":true,"stream":true,"stream_options":{"include_usage":true}}`,
			want:       "R" + strings.Repeat("T", 12) + "FUD",
			wantObject: "chat.completion.chunk", wantUsage: true,
		},
		{
			// Completions has no role chunk; no usage unless asked.
			name: "completions", path: "/v1/completions",
			body:       `{"prompt":"one two three four five","max_tokens":7,"ignore_eos":true,"stream":true}`,
			want:       strings.Repeat("T", 7) + "FD",
			wantObject: "text_completion",
		},
		{
			// Message content given as parts counts its text parts.
			name: "chat content parts", path: "/v1/chat/completions",
			body:       `{"messages":[{"role":"system","content":"one two"},{"role":"user","content":[{"type":"text","text":"three four five"}]}],"max_tokens":3,"ignore_eos":true,"stream":true,"stream_options":{"include_usage":true}}`,
			want:       "RTTTFUD",
			wantObject: "chat.completion.chunk", wantUsage: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := post(context.Background(), c, url+tt.path, tt.body)
			if r.err != nil || r.status != 200 {
				t.Fatalf("status %d, err %v", r.status, r.err)
			}
			got, chunks := transcript(t, r.events)
			if got != tt.want {
				t.Fatalf("transcript %q, want %q", got, tt.want)
			}
			for _, ch := range chunks {
				if ch.ID != chunks[0].ID || ch.Object != tt.wantObject || ch.Model != "tiny-sim" {
					t.Errorf("chunk id/object/model %q/%q/%q, want %q/%q/tiny-sim", ch.ID, ch.Object, ch.Model, chunks[0].ID, tt.wantObject)
				}
			}
			for _, ch := range chunks {
				if classify(ch) == 'F' && *ch.Choices[0].FinishReason != "length" {
					t.Errorf("finish_reason %q, want length (ignore_eos)", *ch.Choices[0].FinishReason)
				}
			}
			if tt.wantUsage {
				u := chunks[len(chunks)-1].Usage
				tokens := strings.Count(got, "T")
				if u.PromptTokens != 5 || u.CompletionTokens != tokens || u.TotalTokens != 5+tokens {
					t.Errorf("usage %+v, want 5 prompt + %d completion tokens", *u, tokens)
				}
			}
		})
	}
}

func TestNonStreamingReplies(t *testing.T) {
	t.Parallel()
	_, url, c := newTestServer(t, nil)
	tests := []struct {
		name, path, body string
		wantReason       string
		wantTokens       int // 0: fewer than max_tokens
	}{
		// ignore_eos runs to max_tokens.
		{"chat ignore_eos", "/v1/chat/completions", `{"messages":[{"role":"user","content":"hi there"}],"max_tokens":20,"ignore_eos":true}`, "length", 20},
		// Without it the profile's lengths (mean 32) stop well before 1000.
		{"chat natural stop", "/v1/chat/completions", `{"messages":[{"role":"user","content":"hi there"}],"max_tokens":1000}`, "stop", 0},
		// min_tokens lifts a short draw up to max_tokens.
		{"min_tokens", "/v1/completions", `{"prompt":"hi there","max_tokens":150,"min_tokens":150}`, "length", 150},
		// Token-id prompts are accepted.
		{"token ids", "/v1/completions", `{"prompt":[1,2,3,4],"max_tokens":5,"ignore_eos":true}`, "length", 5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := post(context.Background(), c, url+tt.path, tt.body)
			if r.err != nil || r.status != 200 {
				t.Fatalf("status %d, err %v, body %s", r.status, r.err, r.body)
			}
			var resp struct {
				Choices []struct {
					Text         string                   `json:"text"`
					Message      struct{ Content string } `json:"message"`
					FinishReason string                   `json:"finish_reason"`
				} `json:"choices"`
				Usage struct {
					CompletionTokens int `json:"completion_tokens"`
				} `json:"usage"`
			}
			if err := json.Unmarshal(r.body, &resp); err != nil {
				t.Fatalf("body %s: %v", r.body, err)
			}
			ch := resp.Choices[0]
			words := len(strings.Fields(ch.Text + ch.Message.Content))
			if ch.FinishReason != tt.wantReason || words != resp.Usage.CompletionTokens {
				t.Errorf("finish %q with %d words and usage %d; want %q and words = usage", ch.FinishReason, words, resp.Usage.CompletionTokens, tt.wantReason)
			}
			if tt.wantTokens > 0 && words != tt.wantTokens {
				t.Errorf("%d tokens, want %d", words, tt.wantTokens)
			}
			if tt.wantTokens == 0 && words >= 1000 {
				t.Errorf("natural stop produced %d tokens, want fewer than max_tokens", words)
			}
		})
	}
}

func TestBadRequests(t *testing.T) {
	t.Parallel()
	_, url, c := newTestServer(t, nil)
	long := strings.Repeat("word ", 2000)
	tests := []struct {
		name, path, body string
		wantStatus       int
		wantInBody       string
	}{
		{"not JSON", "/v1/chat/completions", `{"messages":`, 400, "invalid JSON body"},
		{"no messages", "/v1/chat/completions", `{"messages":[]}`, 400, `"param":"messages"`},
		{"no prompt", "/v1/completions", `{"max_tokens":5}`, 400, "prompt is required"},
		{"bad content", "/v1/chat/completions", `{"messages":[{"role":"user","content":5}]}`, 400, "messages[0].content"},
		{"other model", "/v1/chat/completions", `{"model":"gpt-9","messages":[{"role":"user","content":"hi"}]}`, 404, `"code":"model_not_found"`},
		// OpenAI's wording and code for a prompt + max_tokens that do not fit.
		{"too long with max_tokens", "/v1/chat/completions", `{"messages":[{"role":"user","content":"` + long + `"}],"max_tokens":100}`, 400,
			"This model's maximum context length is 2048 tokens. However, you requested 2100 tokens (2000 in the messages, 100 in the completion)."},
		{"too long prompt alone", "/v1/completions", `{"prompt":"` + long + long + `"}`, 400, `"code":"context_length_exceeded"`},
		{"max_tokens zero", "/v1/completions", `{"prompt":"hi","max_tokens":0}`, 400, "max_tokens must be at least 1"},
		{"min above max", "/v1/completions", `{"prompt":"hi","max_tokens":5,"min_tokens":6}`, 400, "min_tokens"},
		{"n above 1", "/v1/completions", `{"prompt":"hi","n":2}`, 400, "n=2 is not supported"},
		{"batched prompts", "/v1/completions", `{"prompt":["a","b"]}`, 400, "batched prompts"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := post(context.Background(), c, url+tt.path, tt.body)
			if r.err != nil || r.status != tt.wantStatus || !strings.Contains(string(r.body), tt.wantInBody) {
				t.Fatalf("got %d %s (err %v); want %d containing %q", r.status, r.body, r.err, tt.wantStatus, tt.wantInBody)
			}
			var e struct {
				Error struct{ Message, Type string } `json:"error"`
			}
			if err := json.Unmarshal(r.body, &e); err != nil || e.Error.Message == "" || e.Error.Type == "" {
				t.Errorf("body %s is not an OpenAI error object: %v", r.body, err)
			}
		})
	}
}

func TestQueueFullRejects(t *testing.T) {
	t.Parallel()
	tests := []struct {
		status   int
		wantType string
	}{
		{429, "rate_limit_error"}, // the default, as TGI and gateways answer
		{503, "server_error"},     // configured per profile
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.status), func(t *testing.T) {
			t.Parallel()
			_, url, c := newTestServer(t, func(cfg *Config) {
				cfg.Profile.MaxNumSeqs, cfg.Profile.QueueLimit, cfg.Profile.QueueFullStatus = 1, 1, tt.status
				cfg.Profile.Cost.StepOverhead = 10 * time.Millisecond
			})
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			long := `{"prompt":"hi","max_tokens":1000,"ignore_eos":true,"stream":true}`
			// The first runs, the second waits: each request's headers
			// come only after the scheduler admitted it.
			for range 2 {
				req, _ := http.NewRequestWithContext(ctx, http.MethodPost, url+"/v1/completions", strings.NewReader(long))
				resp, err := c.Do(req)
				if err != nil || resp.StatusCode != 200 {
					t.Fatalf("admitted request: %v %v", resp, err)
				}
				defer resp.Body.Close()
			}
			r := post(ctx, c, url+"/v1/completions", long)
			if r.status != tt.status || !strings.Contains(string(r.body), tt.wantType) {
				t.Errorf("third request: %d %s; want %d with type %s", r.status, r.body, tt.status, tt.wantType)
			}
		})
	}
}

func TestFaultsOnTheWire(t *testing.T) {
	t.Parallel()
	const delay = 300 * time.Millisecond
	streamBody := `{"messages":[{"role":"user","content":"hello"}],"max_tokens":20,"ignore_eos":true,"stream":true}`
	plainBody := `{"messages":[{"role":"user","content":"hello"}],"max_tokens":20,"ignore_eos":true}`
	tests := []struct {
		faults string
		body   string
		check  func(r reply, tr string) string // a complaint, or ""
	}{
		{"status503=1", streamBody, func(r reply, _ string) string {
			return want(r.status == 503 && strings.Contains(string(r.body), `"server_error"`), "503 with an error body")
		}},
		{"status429=1", plainBody, func(r reply, _ string) string {
			return want(r.status == 429 && strings.Contains(string(r.body), `"rate_limit_error"`), "429 with a rate-limit error body")
		}},
		{"reset=1", streamBody, func(r reply, tr string) string {
			return want(r.err != nil && !strings.HasSuffix(tr, "D"), "a transport error and no [DONE]")
		}},
		{"reset=1", plainBody, func(r reply, _ string) string {
			return want(r.err != nil && r.status == 0, "a transport error before any status")
		}},
		{"malformed=1", streamBody, func(r reply, tr string) string {
			return want(strings.Count(tr, "!") == 1 && strings.Count(tr, "T") == 20 && strings.HasSuffix(tr, "FD"), "one unparsable chunk among 20 good tokens, then a normal end")
		}},
		{"malformed=1", plainBody, func(r reply, _ string) string {
			return want(r.status == 200 && !json.Valid(r.body), "a 200 with a truncated JSON body")
		}},
		// The stall is inside the stream: the reply takes at least the
		// stall, most of it one gap between events. A gap as read can be
		// shorter than the server's pause (the event before it read late
		// on a busy host), never the whole reply.
		{"stall=1:300ms", streamBody, func(r reply, tr string) string {
			return want(r.total >= delay && r.maxGap >= delay*2/3 && strings.HasSuffix(tr, "FD"),
				"a complete stream of at least 300ms with a gap of at least 200ms inside")
		}},
		{"slow_first_byte=1:300ms", streamBody, func(r reply, tr string) string {
			return want(r.firstByte >= delay && strings.HasSuffix(tr, "FD"), "headers after at least 300ms, then a complete stream")
		}},
		{"missing_done=1", streamBody, func(r reply, tr string) string {
			return want(r.err == nil && strings.HasSuffix(tr, strings.Repeat("T", 20)+"F"), "a clean end after the finish chunk, without [DONE]")
		}},
		{"error_event=1", streamBody, func(r reply, tr string) string {
			return want(strings.HasSuffix(tr, "ED") && strings.Count(tr, "T") < 20, "an error event then [DONE], before all 20 tokens")
		}},
		{"error_event=1", plainBody, func(r reply, _ string) string {
			return want(r.status == 500 && strings.Contains(string(r.body), "simulated fault"), "a 500 with an error body")
		}},
	}
	for _, tt := range tests {
		stream := strings.Contains(tt.body, `"stream":true`)
		t.Run(fmt.Sprintf("%s stream=%v", tt.faults, stream), func(t *testing.T) {
			t.Parallel()
			f, err := ParseFaults(tt.faults)
			if err != nil {
				t.Fatal(err)
			}
			_, url, c := newTestServer(t, func(cfg *Config) { cfg.Faults = f })
			r := post(context.Background(), c, url+"/v1/chat/completions", tt.body)
			tr, _ := transcript(t, r.events)
			if msg := tt.check(r, tr); msg != "" {
				t.Errorf("want %s; got status %d, transcript %q, err %v, max gap %s, first byte %s, total %s, body %.120s",
					msg, r.status, tr, r.err, r.maxGap, r.firstByte, r.total, r.body)
			}
		})
	}
}

func want(ok bool, what string) string {
	if ok {
		return ""
	}
	return what
}

func TestFaultsAreReproducible(t *testing.T) {
	t.Parallel()
	statuses := func(seed uint64) string {
		f, _ := ParseFaults("status503=0.5")
		_, url, c := newTestServer(t, func(cfg *Config) { cfg.Faults, cfg.Seed = f, seed })
		var b strings.Builder
		for range 24 {
			r := post(context.Background(), c, url+"/v1/completions", `{"prompt":"hi","max_tokens":1}`)
			fmt.Fprintf(&b, "%d ", r.status)
		}
		return b.String()
	}
	a, b, other := statuses(42), statuses(42), statuses(43)
	if a != b {
		t.Errorf("same seed, different faults:\n%s\n%s", a, b)
	}
	if a == other {
		t.Errorf("seeds 42 and 43 gave the same faults: %s", a)
	}
	if !strings.Contains(a, "503") || !strings.Contains(a, "200") {
		t.Errorf("a 50%% fault rate over 24 requests gave %s", a)
	}
}

func TestClientDisconnectAborts(t *testing.T) {
	t.Parallel()
	s, url, c := newTestServer(t, nil)
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, url+"/v1/completions",
		strings.NewReader(`{"prompt":"hi","max_tokens":2000,"ignore_eos":true,"stream":true}`))
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := bufio.NewReader(resp.Body).ReadString('\n'); err != nil {
		t.Fatal(err)
	}
	cancel()
	resp.Body.Close()
	waitHandlers(t, s)
	var running, waiting int
	var kv float64
	if err := s.inspect(func(e *Engine) { running, waiting, kv = e.Running(), e.Waiting(), e.KVUsage() }); err != nil {
		t.Fatal(err)
	}
	if running != 0 || waiting != 0 || kv != 0 {
		t.Errorf("after the client left: running %d, waiting %d, KV %g; want all 0", running, waiting, kv)
	}
}

// waitHandlers waits until no generation handler is running.
func waitHandlers(t *testing.T, s *Server) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		s.handlers.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("handlers still running 10s after their clients left")
	}
}

func TestStartAndClose(t *testing.T) {
	t.Parallel()
	p, _ := LookupProfile("tiny")
	s, base, err := Start(Config{Profile: p}, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(base, "http://127.0.0.1:") || !strings.HasSuffix(base, "/v1") {
		t.Errorf("base URL %q, want http://127.0.0.1:PORT/v1", base)
	}
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	c := &http.Client{Transport: tr}
	resp, err := c.Post(base+"/completions", "application/json",
		strings.NewReader(`{"prompt":"hi","max_tokens":2000,"ignore_eos":true,"stream":true}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	br := bufio.NewReader(resp.Body)
	if _, err := br.ReadString('\n'); err != nil {
		t.Fatal(err)
	}
	s.Close()
	rest, err := io.ReadAll(br)
	if err == nil || strings.Contains(string(rest), "[DONE]") {
		t.Errorf("stream cut by Close: err %v, [DONE] seen %v; want an error and no [DONE]", err, strings.Contains(string(rest), "[DONE]"))
	}
	if _, err := c.Get(base + "/models"); err == nil {
		t.Error("server still answers after Close")
	}
	s.Close() // idempotent
}

func TestNewRejectsBadConfig(t *testing.T) {
	t.Parallel()
	tiny, _ := LookupProfile("tiny")
	broken := tiny
	broken.BlockSize = 0
	tests := []struct {
		name    string
		cfg     Config
		wantErr string
	}{
		{"bad profile", Config{Profile: broken}, "block_size"},                            // the profile is validated
		{"bad faults", Config{Profile: tiny, Faults: Faults{Reset: 3}}, "reset fraction"}, // so are the faults
		{"negative speedup", Config{Profile: tiny, Speedup: -1}, "speedup"},               // time runs forwards
	}
	for _, tt := range tests {
		s, err := New(tt.cfg)
		if err == nil {
			s.Close()
		}
		if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
			t.Errorf("%s: got %v, want an error mentioning %q", tt.name, err, tt.wantErr)
		}
	}
	s, err := New(Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if s.Profile().Name != DefaultProfile {
		t.Errorf("zero Config runs %q, want the default %q", s.Profile().Name, DefaultProfile)
	}
}

func TestTokensFollowSimulatedTime(t *testing.T) {
	t.Parallel()
	tests := []struct {
		speedup float64
		minGap  time.Duration // a 10 ms step, seen on the wall clock
	}{
		{1, 10 * time.Millisecond},   // real time: one token per 10 ms step
		{4, 2500 * time.Microsecond}, // 4× faster: a quarter of that
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.speedup), func(t *testing.T) {
			t.Parallel()
			_, url, c := newTestServer(t, func(cfg *Config) {
				cfg.Profile.Cost = CostModel{StepOverhead: 10 * time.Millisecond}
				cfg.Speedup = tt.speedup
			})
			start := time.Now()
			r := post(context.Background(), c, url+"/v1/completions", `{"prompt":"hi","max_tokens":20,"ignore_eos":true,"stream":true}`)
			elapsed := time.Since(start)
			if tr, _ := transcript(t, r.events); tr != strings.Repeat("T", 20)+"FD" {
				t.Fatalf("transcript %q", tr)
			}
			// 20 steps, each released no earlier than its end.
			if least := 20 * tt.minGap; elapsed < least {
				t.Errorf("20 tokens took %s, less than 20 steps of %s: tokens released early", elapsed, tt.minGap)
			}
		})
	}
}
