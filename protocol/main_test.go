package protocol

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"

	"go.uber.org/goleak"
)

// benchServerEnv makes the test binary run as the benchmark's target
// server instead of running tests: the end-to-end benchmarks then measure
// the client's CPU alone, with the server in another process.
const benchServerEnv = "INFERLOAD_PROTOCOL_BENCH_SERVER"

func TestMain(m *testing.M) {
	if os.Getenv(benchServerEnv) != "" {
		runBenchServer()
		return
	}
	goleak.VerifyTestMain(m)
}

// runBenchServer serves a zero-delay OpenAI-style target on 127.0.0.1,
// prints its address, and exits when stdin closes (the parent is gone).
func runBenchServer() {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	srv := &http.Server{Handler: http.HandlerFunc(benchHandler)}
	go func() { _ = srv.Serve(l) }()
	fmt.Println("ADDR", l.Addr().String())
	_, _ = io.Copy(io.Discard, os.Stdin)
}

// benchChunks are pre-rendered so the server spends little CPU per token.
var benchChunks = struct {
	role, token, finish, usage []byte
}{
	role:   []byte("data: " + roleChunk + "\n\n"),
	token:  []byte(vllmChunk),
	finish: []byte(`data: {"id":"c1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":""},"finish_reason":"length"}]}` + "\n\n"),
	usage:  []byte("data: " + usageChunk + "\n\ndata: [DONE]\n\n"),
}

// benchHandler streams max_tokens token events, flushing each one as a
// real server does, or answers with one JSON body. With "batch": true it
// leaves flushing to its 4 KiB write buffer instead (about 17 events per
// write); with "hold": true a stream sends its role chunk and then stays
// open until the client goes away (for the memory benchmark).
func benchHandler(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Stream    bool `json:"stream"`
		MaxTokens int  `json:"max_tokens"`
		Hold      bool `json:"hold"`
		Batch     bool `json:"batch"`
		Endless   bool `json:"endless"`
		Giant     bool `json:"giant"`
	}
	_ = json.NewDecoder(r.Body).Decode(&req)
	if !req.Stream {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"id":"x","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant",`+
			`"content":"Hello there, how can I help?"},"finish_reason":"stop"}],"usage":{"prompt_tokens":9,"completion_tokens":8}}`)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	fl := w.(http.Flusher)
	_, _ = w.Write(benchChunks.role)
	fl.Flush()
	if req.Hold {
		<-r.Context().Done()
		return
	}
	if req.Endless {
		endless(w, r, req.Giant)
		return
	}
	for range req.MaxTokens {
		_, _ = w.Write(benchChunks.token)
		if !req.Batch {
			fl.Flush()
		}
	}
	_, _ = w.Write(benchChunks.finish)
	_, _ = w.Write(benchChunks.usage)
}

// benchTarget is the server process shared by the benchmarks of one run.
var benchTarget struct {
	once  sync.Once
	url   string
	err   error
	stdin io.WriteCloser // held open: the server exits when it closes
}

// startBenchServer starts the server process once; it lives until the
// benchmark binary exits and its stdin closes.
func startBenchServer(b *testing.B) string {
	benchTarget.once.Do(func() {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), benchServerEnv+"=1", "GOMAXPROCS=1")
		cmd.Stderr = os.Stderr
		stdin, err := cmd.StdinPipe()
		if err != nil {
			benchTarget.err = err
			return
		}
		benchTarget.stdin = stdin
		out, err := cmd.StdoutPipe()
		if err != nil {
			benchTarget.err = err
			return
		}
		if err := cmd.Start(); err != nil {
			benchTarget.err = err
			return
		}
		line, err := bufio.NewReader(out).ReadString('\n')
		addr, ok := strings.CutPrefix(strings.TrimSpace(line), "ADDR ")
		if err != nil || !ok {
			benchTarget.err = fmt.Errorf("bench server said %q: %v", line, err)
			return
		}
		benchTarget.url = "http://" + addr + "/v1"
	})
	if benchTarget.err != nil {
		b.Fatal(benchTarget.err)
	}
	return benchTarget.url
}

// benchRequest renders a request for the bench server.
func benchRequest(b *testing.B, stream bool, tokens int, extra map[string]any) *Request {
	body, err := OpenAIBody{Model: "m", Prompt: strings.Repeat("word ", 100), MaxTokens: tokens,
		Stream: stream, IncludeUsage: true, Extra: extra}.Render(APIChat)
	if err != nil {
		b.Fatal(err)
	}
	return &Request{API: APIChat, Body: body, Stream: stream, MaxTokens: tokens, EventsCap: tokens}
}

// endless streams token events as fast as the connection takes them until
// the client goes away: the hostile server of the endless-stream memory
// benchmark. Events go out 64 per write, flushed, so the client sees a
// steady stream of small reads. With giant, each event carries 200 KiB of
// content (just under the client's event size limit) instead.
func endless(w http.ResponseWriter, r *http.Request, giant bool) {
	burst := []byte(strings.Repeat(vllmChunk, 64))
	if giant {
		burst = []byte("data: " + chatToken(strings.Repeat("a", 200<<10)) + "\n\n")
	}
	fl := w.(http.Flusher)
	for r.Context().Err() == nil {
		if _, err := w.Write(burst); err != nil {
			return
		}
		fl.Flush()
	}
}
