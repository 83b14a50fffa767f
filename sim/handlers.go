package sim

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// maxBodyBytes bounds a request body; a 4k-token prompt is ~20 KB.
const maxBodyBytes = 32 << 20

func (s *Server) routes() *http.ServeMux {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/chat/completions", s.tracked(s.generate(apiChat)))
	mux.HandleFunc("POST /v1/completions", s.tracked(s.generate(apiCompletions)))
	mux.HandleFunc("POST /v1/responses", s.tracked(s.nativeHandler(s.parseResponses, newResponsesDialect)))
	mux.HandleFunc("POST /v1/messages", s.tracked(s.nativeHandler(parseMessages, newMessagesDialect)))
	mux.HandleFunc("POST /v1/embeddings", s.tracked(s.embeddings))
	mux.HandleFunc("POST /v1/images/generations", s.tracked(s.images))
	mux.HandleFunc("POST /v1/rerank", s.tracked(s.nativeHandler(parseRerank(s.prof.MaxModelLen), newPoolingDialect)))
	mux.HandleFunc("POST /v1/score", s.tracked(s.nativeHandler(parseScore(s.prof.MaxModelLen), newPoolingDialect)))
	mux.HandleFunc("GET /v1/realtime", s.tracked(s.realtime))
	mux.HandleFunc("POST /v1/audio/transcriptions", s.tracked(s.nativeHandler(parseTranscription, newTranscriptionDialect)))
	mux.HandleFunc("POST /pooling", s.tracked(s.nativeHandler(parsePooling(s.prof.MaxModelLen), newPoolingDialect)))
	mux.HandleFunc("GET /v1/models", s.models)
	mux.HandleFunc("POST /generate", s.tracked(s.nativeHandler(parseTGI(false), newTGIDialect)))
	mux.HandleFunc("POST /generate_stream", s.tracked(s.nativeHandler(parseTGI(true), newTGIDialect)))
	mux.HandleFunc("GET /info", s.tgiInfo)
	mux.HandleFunc("POST /api/chat", s.tracked(s.nativeHandler(parseOllama(true), newOllamaDialect(true))))
	mux.HandleFunc("POST /api/generate", s.tracked(s.nativeHandler(parseOllama(false), newOllamaDialect(false))))
	mux.HandleFunc("GET /api/version", s.ollamaVersion)
	mux.HandleFunc("GET /api/tags", s.ollamaTags)
	mux.HandleFunc("POST /api/show", s.ollamaShow)
	mux.HandleFunc("POST /v2/models/{model}/generate", s.tracked(s.nativeHandler(parseTriton(false, s.prof.Model), newTritonDialect)))
	mux.HandleFunc("POST /v2/models/{model}/generate_stream", s.tracked(s.nativeHandler(parseTriton(true, s.prof.Model), newTritonDialect)))
	mux.HandleFunc("POST /v2/models/{model}/infer", s.tracked(s.nativeHandler(parseTritonInfer(s.prof.Model), newTritonInferDialect)))
	mux.HandleFunc("GET /v2/models/{model}", s.tritonModel)
	mux.HandleFunc("GET /v2", s.tritonServer)
	mux.HandleFunc("POST "+grpcPath, s.tracked(s.grpcHandler))
	mux.HandleFunc("GET /v2/health/ready", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) })
	mux.HandleFunc("POST /predictions/{model}", s.tracked(s.nativeHandler(parseTorchServe(s.prof.Model), newTorchServeDialect)))
	mux.HandleFunc("GET /ping", s.torchServePing)
	mux.HandleFunc("GET /models/{model}", s.torchServeModel)
	mux.HandleFunc("POST /collections/{collection}/points/search", s.tracked(s.vectorSearch))
	mux.HandleFunc("GET /health", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) })
	mux.Handle("GET /metrics", promhttp.HandlerFor(s.m.reg, promhttp.HandlerOpts{}))
	return mux
}

// tracked counts handlers in flight, so Close can wait for them. Once
// Close has begun no handler joins (a WaitGroup must not grow from zero
// while someone waits on it); late requests get a 503.
func (s *Server) tracked(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		s.handlersMu.Lock()
		if s.closing {
			s.handlersMu.Unlock()
			writeAPIError(w, s.admissionError(errClosed))
			return
		}
		s.handlers.Add(1)
		s.handlersMu.Unlock()
		defer s.handlers.Done()
		h(w, r)
	}
}

func jsonString(v string) []byte {
	b, _ := json.Marshal(v)
	return b
}

func (s *Server) models(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	_, _ = fmt.Fprintf(w, `{"object":"list","data":[{"id":%s,"object":"model","created":%d,"owned_by":"inferload-sim","root":%s,"parent":null,"max_model_len":%d}]}`,
		s.modelJSON, s.epoch.Unix(), s.modelJSON, s.prof.MaxModelLen)
}

// call is one generation request being answered.
type call struct {
	s       *Server
	w       http.ResponseWriter
	r       *http.Request
	ctx     context.Context // the request's (r's, or a gRPC call's): done when the client leaves
	g       generation
	fault   Fault
	faultAt int // mid-stream faults fire before this token is written
	id      string
	created int64
	words   uint64 // where the answer starts in the vocabulary
	// reasoning is how many of the reply's first tokens are reasoning
	// (Profile.ReasoningLength); 0 for a model that does not reason.
	reasoning int
	st        *stream
	d         dialect
	// answer is the reply's whole text when the request carried an
	// expected answer (answer.go), "" otherwise; answerJSON is it escaped
	// for a JSON string. answerDraw decides whether it is degraded.
	answer, answerJSON string
	answerDraw         float64
}

func (s *Server) generate(api apiKind) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBodyBytes))
		if err != nil {
			writeAPIError(w, badRequest("", "reading request body: %v", err))
			return
		}
		g, aerr := parseGeneration(body, api, s.prof)
		if aerr != nil {
			writeAPIError(w, aerr)
			return
		}
		s.generating.Add(1)
		defer s.generating.Add(-1)
		c := s.newCall(w, r, g)
		c.answerWith(r.Header.Get(ExpectAnswerHeader), s.generating.Load())
		if c.callsTool() {
			c.callTool()
		}
		c.d = &openaiDialect{c: c, cr: newChunkRenderer(api, c.id, c.created, s.modelJSON)}
		c.serve()
	}
}

// newCall draws everything random about a request from the seed and its
// arrival number, in a fixed order, so runs are reproducible.
func (s *Server) newCall(w http.ResponseWriter, r *http.Request, g generation) *call {
	c := s.drawCall(g, r.Header.Get("X-Request-Id"), r.Header.Get("Traceparent"))
	c.w, c.r, c.ctx = w, r, r.Context()
	return c
}

// drawCall is newCall for any transport: requestID and traceParent are
// the request's join keys (x-request-id, traceparent).
func (s *Server) drawCall(g generation, requestID, traceParent string) *call {
	rng := rand.New(rand.NewPCG(s.seed, s.arrivals.Add(1)))
	c := &call{s: s, g: g, created: time.Now().Unix()}
	c.fault = s.faults.Pick(rng.Float64())
	out, reason := s.outputLength(g, rng)
	out, reason, c.reasoning = s.reasoningLength(g, out, reason, rng)
	c.faultAt = rng.IntN(out)
	c.words = rng.Uint64()
	prefix := "chatcmpl-"
	if g.api == apiCompletions {
		prefix = "cmpl-"
	}
	c.id = fmt.Sprintf("%s%016x", prefix, rng.Uint64())
	c.answerDraw = rng.Float64() // last, so the draws before it are as they were
	c.st = &stream{reason: reason, eager: g.stream, notify: make(chan struct{}, 1), requestID: requestID, traceParent: traceParent}
	c.st.req = Request{PromptTokens: g.promptTokens, BlockHashes: g.sequenceHashes(c.words, out), OutputTokens: out, Batch: g.batch, Ref: c.st}
	return c
}

// sequenceHashes are the block hashes of the prompt followed by the reply
// of out tokens from word offset words, so the engine caches the reply's
// full blocks too. A reply replaced later by an expected answer or a tool
// call is one token, which never fills a block past the prompt, so the
// blocks hashed here are never cached for it.
func (g *generation) sequenceHashes(words uint64, out int) []uint64 {
	if g.hasher == nil || g.hasher.Tokens() != g.promptTokens {
		return g.hashes // an empty prompt counts as one token it never hashed
	}
	g.hasher.AddReply(words, out)
	return g.hasher.BlockHashes()
}

// outputLength decides how many tokens to generate and why it stops:
// ignore_eos runs to max_tokens; otherwise the profile's distribution
// draws a length, raised to min_tokens and capped by max_tokens.
func (s *Server) outputLength(g generation, rng *rand.Rand) (int, string) {
	if g.ignoreEOS {
		return g.maxTokens, "length"
	}
	n := max(s.prof.OutputLength.Sample(rng), g.minTokens)
	if n >= g.maxTokens {
		return g.maxTokens, "length"
	}
	return n, "stop"
}

// reasoningLength adds a reasoning phase before an answer of out tokens
// when the profile reasons (chat only): a drawn length, max_tokens
// capping reasoning and answer together ("length" when it cuts), all of
// max_tokens under ignore_eos. It draws only for a reasoning profile, so
// other profiles' runs are unchanged.
func (s *Server) reasoningLength(g generation, out int, reason string, rng *rand.Rand) (total int, why string, reasoning int) {
	d, ok := s.prof.reasoningFor(g.effort)
	if !ok || g.api != apiChat {
		return out, reason, 0
	}
	r := d.Sample(rng)
	if g.ignoreEOS {
		return out, reason, min(r, out)
	}
	if r+out >= g.maxTokens {
		return g.maxTokens, "length", min(r, g.maxTokens)
	}
	return r + out, reason, r
}

func (c *call) serve() {
	s := c.s
	switch c.fault.Kind {
	case FaultStatus:
		c.writeError(statusFault(c.fault.Status))
		return
	case FaultSlowFirstByte:
		if !c.pause(c.fault.Delay) {
			return
		}
	}
	if err := s.submit(c.st); err != nil {
		c.writeError(s.admissionError(err))
		return
	}
	defer s.abort(c.st)
	if c.g.stream {
		c.serveStream()
	} else {
		c.serveJSON()
	}
}

// statusFault is the body an injected error status carries.
func statusFault(code int) *apiError {
	e := &apiError{status: code, typ: "server_error", msg: fmt.Sprintf("simulated fault: HTTP %d %s", code, http.StatusText(code))}
	switch {
	case code == http.StatusTooManyRequests:
		e.typ, e.code = "rate_limit_error", "rate_limit_exceeded"
	case code < 500:
		e.typ = "invalid_request_error"
	}
	return e
}

// admissionError maps an Engine.Add failure to the reply a real server
// or its gateway would give.
func (s *Server) admissionError(err error) *apiError {
	switch {
	case errors.Is(err, ErrQueueFull):
		e := &apiError{status: s.prof.QueueFullStatus, typ: "server_error", code: "server_overloaded",
			msg: "The server is overloaded: " + err.Error() + ". Retry later."}
		if e.status == http.StatusTooManyRequests {
			e.typ, e.code = "rate_limit_error", "rate_limit_exceeded"
		}
		return e
	case errors.Is(err, ErrTooLong):
		return tooLong("messages", err.Error())
	case errors.Is(err, errClosed):
		return &apiError{status: http.StatusServiceUnavailable, typ: "server_error", msg: err.Error()}
	}
	return &apiError{status: http.StatusInternalServerError, typ: "server_error", msg: err.Error()}
}

// pause waits d unless the client leaves or the server closes.
func (c *call) pause(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-c.ctx.Done():
		return false
	case <-c.s.done:
		return false
	}
}

// await blocks until the scheduler has news for this stream. A server
// shutting down cuts the connection, so the client sees a broken stream
// rather than a clean but short one.
func (c *call) await() bool {
	select {
	case <-c.st.notify:
		return true
	case <-c.ctx.Done():
		return false
	case <-c.s.done:
		panic(http.ErrAbortHandler)
	}
}

// progress reports the tokens available and whether they are all. done is
// read first: the scheduler stores avail before done, so a true done
// guarantees avail is final.
func (st *stream) progress() (int, bool) {
	done := st.done.Load()
	return int(st.avail.Load()), done
}

// faultMsg is the message of the error_event fault.
const faultMsg = "simulated fault: the engine failed mid-generation"

// serveStream writes the streamed reply in the call's dialect: its opening,
// one object per token, its close - with the request's fault, if any,
// somewhere in between.
func (c *call) serveStream() {
	h := c.w.Header()
	h.Set("Content-Type", c.d.contentType())
	h.Set("Cache-Control", "no-cache")
	c.w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(c.w)
	_ = rc.Flush()
	hold := 0
	if c.d.holdsLast() {
		hold = 1
	}
	sent := 0
	for c.await() {
		avail, done := c.st.progress()
		if sent == 0 && avail > 0 {
			if b := c.d.start(); b != nil {
				c.write(b)
			}
		}
		for ; sent < avail-hold; sent++ {
			if sent == c.faultAt && !c.midStreamFault(sent) {
				return
			}
			c.write(c.d.token(sent, c.tokenText(sent), false))
		}
		if done {
			c.finishStream(sent + hold)
			return
		}
		if rc.Flush() != nil {
			return
		}
	}
}

// midStreamFault injects the request's fault before token i; false means
// the stream is over.
func (c *call) midStreamFault(i int) bool {
	switch c.fault.Kind {
	case FaultReset:
		c.reset()
		return false
	case FaultMalformed:
		if b := c.d.token(i, tokenText(c.words, i), true); b != nil {
			c.write(b)
		}
	case FaultStall:
		_ = http.NewResponseController(c.w).Flush()
		return c.pause(c.fault.Delay)
	case FaultErrorEvent:
		b := c.d.errorEvent(faultMsg)
		if b == nil {
			_ = http.NewResponseController(c.w).Flush()
			panic(http.ErrAbortHandler) // no in-band error: the stream is cut
		}
		c.write(b)
		return false
	}
	return true
}

// finishStream closes a stream of sent tokens; a dialect that holds the
// last token back writes it now, after its turn for the fault.
func (c *call) finishStream(sent int) {
	last := ""
	if c.d.holdsLast() {
		if sent-1 == c.faultAt && !c.midStreamFault(sent-1) {
			return
		}
		last = tokenText(c.words, sent-1)
	}
	c.write(c.d.end(sent, last, c.fault.Kind != FaultMissingDone))
	_ = http.NewResponseController(c.w).Flush()
}

// write sends bytes to the client; errors surface as the request's
// context ending, which the next await sees.
func (c *call) write(b []byte) { _, _ = c.w.Write(b) }

// reset hijacks the connection and closes it with SO_LINGER 0, so the
// kernel sends a TCP RST: what a crashed server or proxy looks like. A
// stream's chunks so far go out first; a plain reply sends nothing, not
// even its status line.
func (c *call) reset() {
	rc := http.NewResponseController(c.w)
	if c.g.stream {
		_ = rc.Flush()
	}
	conn, _, err := rc.Hijack()
	if err != nil {
		panic(http.ErrAbortHandler) // not hijackable (HTTP/2): abort instead
	}
	if tcp, ok := conn.(*net.TCPConn); ok {
		_ = tcp.SetLinger(0)
	}
	_ = conn.Close()
}

// serveJSON waits for the whole answer, then sends it in one body.
func (c *call) serveJSON() {
	for {
		if !c.await() {
			return
		}
		if _, done := c.st.progress(); done {
			break
		}
	}
	n := c.st.req.OutputTokens
	text := c.answer
	if text == "" {
		text = ReplyText(c.words, n)
	}
	c.writeWhole(c.d.whole(c.w.Header(), text, n), c.writeError)
}

// writeWhole writes a whole (non-streamed) reply, or the request's fault
// in its place: a reset, a stall before it, half the body, or an error
// reply written by errorReply in the API's own shape.
func (c *call) writeWhole(body []byte, errorReply func(*apiError)) {
	switch c.fault.Kind {
	case FaultReset:
		c.reset()
		return
	case FaultStall:
		if !c.pause(c.fault.Delay) {
			return
		}
	case FaultMalformed:
		body = body[:len(body)/2]
	case FaultErrorEvent:
		errorReply(&apiError{status: http.StatusInternalServerError, typ: "server_error", code: "internal_error", msg: faultMsg})
		return
	}
	_, _ = c.w.Write(body)
}
