package sim

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"google.golang.org/grpc"
)

// Config configures a Server. Its zero value runs the default profile
// with no faults at real speed.
type Config struct {
	// Profile is the deployment to simulate; the zero Profile means
	// LookupProfile(DefaultProfile).
	Profile Profile
	// Faults, when not zero, replaces Profile.Faults.
	Faults Faults
	// Seed makes fault choice, output lengths and answer text
	// reproducible: the k-th request to arrive gets the k-th draw.
	Seed uint64
	// Speedup runs the simulated clock this many times faster than the
	// wall clock (0 means 1). Reported latencies stay in simulated time;
	// fault delays are wall-clock.
	Speedup float64
	// OnFinish, when set, is told each finished request's x-request-id
	// (empty when it sent none) and the engine's exact times: the ground
	// truth a test checks a client's decomposition against. It runs on
	// the scheduler goroutine, so it must be quick.
	OnFinish func(requestID string, t Truth)
	// OTLPTracesEndpoint, when set, makes the simulator export an OTLP
	// span per finished request, as vLLM does with --otlp-traces-endpoint:
	// http(s)://HOST:PORT[/v1/traces] for OTLP/HTTP protobuf,
	// grpc://HOST:PORT for OTLP/gRPC (sim/otlp.go).
	OTLPTracesEndpoint string
	// OTLPExportEvery is how often spans are exported (0 means
	// DefaultOTLPExportEvery).
	OTLPExportEvery time.Duration
	// Metrics names the metric set /metrics exports: "vllm" (the
	// default, also for ""), "tgi", "triton" or "torchserve"
	// (MetricSets).
	Metrics string
}

// Truth is the engine's account of one finished request: queued from
// arrival to first admission, prefill to the first token, decode to the
// last; the same figures the final stream chunk's timings carry.
type Truth struct {
	Queue, Prefill, Decode time.Duration
}

// Server is a simulated OpenAI-compatible inference server: HTTP handlers
// in front of one scheduler goroutine that owns the Engine and releases
// each step's tokens when the step's simulated time has passed.
type Server struct {
	prof    Profile
	faults  Faults
	seed    uint64
	speedup float64
	// onFinish is Config.OnFinish.
	onFinish func(string, Truth)
	// spans exports finished requests' spans; nil without an endpoint.
	spans *spanExporter

	eng      *Engine
	counters EngineCounters
	m        *metrics
	gpu      *gpuCollector
	mux      *http.ServeMux
	grpcSrv  *grpc.Server // Triton's gRPC API, served through mux

	cmds      chan command
	done      chan struct{}
	stopped   chan struct{}
	closeOnce sync.Once
	httpSrv   *http.Server

	handlersMu sync.Mutex
	closing    bool
	handlers   sync.WaitGroup

	arrivals atomic.Uint64
	// generating counts the chat and completions requests being answered
	// (queued or running), the load AnswerDegrade compares with.
	generating atomic.Int64
	held       heldResponses // the Responses API's answered conversations
	imageGen   imageGen      // the image-generation model (imagegen.go)
	epoch      time.Time
	modelJSON  []byte

	// Scheduler-owned step clock.
	clock    time.Duration // engine time when the last step ended
	busy     bool          // a step ended and the next follows at once
	deadline time.Time

	latMu    sync.Mutex
	lateness *hdrhistogram.Histogram // nanoseconds
}

// errClosed answers requests that arrive while the server shuts down.
var errClosed = errors.New("simulator is shutting down")

// catchUpSlack is how late (wall clock) a step may be delivered and still
// have the next step start at the previous one's simulated end, so timer
// wake-up delays do not add up into a slower simulated GPU. A longer gap
// (the process was descheduled) is dropped instead of replayed in a burst.
const catchUpSlack = 20 * time.Millisecond

// New validates cfg and starts the scheduler; call Close to stop it.
func New(cfg Config) (*Server, error) {
	p := cfg.Profile
	if p.Name == "" && p.Model == "" {
		p, _ = LookupProfile(DefaultProfile)
	}
	eng, err := NewEngine(p)
	if err != nil {
		return nil, fmt.Errorf("sim: %w", err)
	}
	s := &Server{
		prof: eng.Profile(), faults: eng.Profile().Faults, seed: cfg.Seed, speedup: cfg.Speedup, onFinish: cfg.OnFinish,
		imageGen: imageGen{slots: make(chan struct{}, imageGenSlots)},
		eng:      eng, cmds: make(chan command, 256), done: make(chan struct{}), stopped: make(chan struct{}),
		epoch: time.Now(), lateness: hdrhistogram.New(1, int64(10*time.Second), 3),
	}
	if err := checkMetricSet(cfg.Metrics); err != nil {
		return nil, fmt.Errorf("sim: %w", err)
	}
	if !cfg.Faults.IsZero() {
		if err := cfg.Faults.Validate(); err != nil {
			return nil, fmt.Errorf("sim: faults: %w", err)
		}
		s.faults = cfg.Faults.clone()
	}
	switch {
	case s.speedup == 0:
		s.speedup = 1
	case s.speedup < 0:
		return nil, fmt.Errorf("sim: speedup must be > 0, got %g", cfg.Speedup)
	}
	if s.prof.GPU.Count > 0 {
		s.gpu = newGPUCollector(s.prof, s.epoch)
	}
	if cfg.OTLPTracesEndpoint != "" {
		if s.spans, err = newSpanExporter(cfg.OTLPTracesEndpoint, cfg.OTLPExportEvery, s.prof.Model); err != nil {
			return nil, fmt.Errorf("sim: %w", err)
		}
	}
	s.m = newMetrics(s.prof, s.gpu, cfg.Metrics)
	s.modelJSON = jsonString(s.prof.Model)
	s.grpcSrv = s.newGRPCServer()
	s.mux = s.routes()
	go s.loop()
	return s, nil
}

// Start is New plus an HTTP server listening on addr ("127.0.0.1:0" picks
// a free port). It returns the OpenAI base URL, e.g.
// "http://127.0.0.1:8000/v1". Close stops both.
func Start(cfg Config, addr string) (*Server, string, error) {
	s, err := New(cfg)
	if err != nil {
		return nil, "", err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		s.Close()
		return nil, "", fmt.Errorf("sim: listen %s: %w", addr, err)
	}
	s.httpSrv = &http.Server{Handler: s.Handler(), ReadHeaderTimeout: 30 * time.Second, Protocols: new(http.Protocols)}
	// HTTP/1.1, and cleartext HTTP/2 with prior knowledge (h2c), as vLLM
	// and others serve behind --http2-style options: `inferload run
	// --http2 h2c` measures multiplexed streams against it.
	s.httpSrv.Protocols.SetHTTP1(true)
	s.httpSrv.Protocols.SetUnencryptedHTTP2(true)
	go func() { _ = s.httpSrv.Serve(ln) }()
	return s, "http://" + ln.Addr().String() + "/v1", nil
}

// Handler serves the OpenAI endpoints (/v1/chat/completions,
// /v1/completions, /v1/embeddings, /v1/images/generations, /v1/rerank,
// /v1/score, /v1/audio/transcriptions, /v1/realtime (a WebSocket),
// /v1/models), vLLM's /pooling, the native ones (TGI's
// /generate, /generate_stream and /info; Ollama's /api/chat,
// /api/generate, /api/version, /api/tags and /api/show; Triton's
// /v2/models/{model}/generate[_stream], /v2/models/{model}/infer (a
// classification model's tensors), /v2/models/{model} and /v2;
// TorchServe's /predictions/{model}, /ping and /models/{model}), Triton's
// gRPC service (/inference.GRPCInferenceService/, over HTTP/2), /health
// and /metrics.
func (s *Server) Handler() http.Handler { return s.mux }

// Profile is the profile the server runs, defaults filled in.
func (s *Server) Profile() Profile { return s.prof }

// Close stops the scheduler; streams in flight are cut off. For a server
// made by Start it also closes the listener and connections and waits for
// the handlers to return. Close is idempotent.
func (s *Server) Close() {
	s.closeOnce.Do(func() {
		s.handlersMu.Lock()
		s.closing = true
		s.handlersMu.Unlock()
		close(s.done)
		<-s.stopped
		if s.httpSrv != nil {
			_ = s.httpSrv.Close()
			s.handlers.Wait()
		}
		s.grpcSrv.Stop()
		if s.spans != nil {
			s.spans.close() // after the last request finished: its span goes too
		}
	})
}

// SpanStats counts the spans the simulator exported (Config.OTLPTracesEndpoint):
// sent, dropped because the export queue was full, and lost in failed exports.
type SpanStats struct{ Sent, Dropped, Failed int64 }

// SpanStats returns the span export counts so far; zero without an endpoint.
func (s *Server) SpanStats() SpanStats {
	if s.spans == nil {
		return SpanStats{}
	}
	return SpanStats{Sent: s.spans.sent.Load(), Dropped: s.spans.dropped.Load(), Failed: s.spans.failed.Load()}
}

// StepStats describes how closely the scheduler kept to simulated time.
type StepStats struct {
	// Steps is the number of engine steps delivered.
	Steps int64
	// Lateness percentiles: how long after a step's wall-clock deadline
	// its tokens were released.
	LatenessP50, LatenessP99, LatenessMax time.Duration
}

// StepStats returns the step timing figures so far.
func (s *Server) StepStats() StepStats {
	s.latMu.Lock()
	defer s.latMu.Unlock()
	return StepStats{
		Steps:       s.lateness.TotalCount(),
		LatenessP50: time.Duration(s.lateness.ValueAtQuantile(50)),
		LatenessP99: time.Duration(s.lateness.ValueAtQuantile(99)),
		LatenessMax: time.Duration(s.lateness.Max()),
	}
}

type cmdKind uint8

const (
	cmdAdd cmdKind = iota
	cmdAbort
	cmdInspect
)

// command is a handler's request to the scheduler goroutine.
type command struct {
	kind  cmdKind
	st    *stream
	reply chan error    // cmdAdd and cmdInspect; buffered
	fn    func(*Engine) // cmdInspect
}

// stream links one HTTP request to its engine sequence. The scheduler
// publishes progress through the atomics and wakes the handler through
// notify; a handler that falls behind finds several tokens waiting and
// writes them in one go, so slow readers never slow the scheduler.
type stream struct {
	req    Request
	reason string    // finish_reason when the last token comes
	seq    *Sequence // set by the scheduler on admission
	// eager streams want every step's tokens; a non-streaming reply only
	// needs waking when it is complete.
	eager bool

	avail  atomic.Int64 // tokens generated so far
	done   atomic.Bool  // the last token is in avail
	cached int          // prefix-cache hit; written before done is set
	// openCached is the same hit, stored before avail at every token:
	// what a reply's opening (Anthropic's message_start usage) reports
	// while the scheduler may still be writing cached.
	openCached atomic.Int64
	// times is the engine's exact account of the request, for the final
	// chunk's timings; written before done is set.
	times seqTimes
	// requestID is the request's x-request-id header, for OnFinish;
	// traceParent its traceparent, which its span continues.
	requestID   string
	traceParent string
	notify      chan struct{}
}

func (st *stream) wake() {
	select {
	case st.notify <- struct{}{}:
	default:
	}
}

// loop is the scheduler goroutine: it alone touches the engine.
func (s *Server) loop() {
	defer close(s.stopped)
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	var inFlight *StepResult
	for {
		if inFlight == nil {
			inFlight = s.startStep(timer)
		}
		var tick <-chan time.Time
		if inFlight != nil {
			tick = timer.C
		}
		select {
		case c := <-s.cmds:
			s.apply(c)
		case <-tick:
			s.finishStep(inFlight)
			inFlight = nil
		case <-s.done:
			timer.Stop()
			return
		}
	}
}

func (s *Server) virtualNow(t time.Time) time.Duration {
	return time.Duration(float64(t.Sub(s.epoch)) * s.speedup)
}

func (s *Server) wallOffset(v time.Duration) time.Duration {
	return time.Duration(float64(v) / s.speedup)
}

// startStep runs the next engine step, if there is work, and arms the
// timer for its end. Back-to-back steps are chained on simulated time,
// not on when the timer happened to fire, so wake-up delays don't drift.
//
// A chained step can start before a request that arrived while the last
// step ran, and then finds nothing it may admit; the second attempt starts
// at the wall clock's now, after every arrival.
func (s *Server) startStep(timer *time.Timer) *StepResult {
	for attempt := range 2 {
		if !s.eng.HasWork() {
			s.busy = false
			return nil
		}
		wall := time.Now()
		now := s.virtualNow(wall)
		start := max(now, s.clock)
		if s.busy && attempt == 0 && now-s.clock < time.Duration(float64(catchUpSlack)*s.speedup) {
			start = s.clock
		}
		res := s.eng.Step(start)
		if res.Idle() {
			continue
		}
		s.deadline = s.epoch.Add(s.wallOffset(res.End()))
		timer.Reset(time.Until(s.deadline))
		if s.gpu != nil {
			s.gpu.stepStarted(wall)
		}
		return res
	}
	s.busy = false
	return nil
}

// finishStep releases a step's tokens to the handlers and updates the
// metrics, all stamped with the engine's clock.
func (s *Server) finishStep(res *StepResult) {
	now := time.Now()
	s.recordLateness(now.Sub(s.deadline))
	if s.gpu != nil {
		s.gpu.stepEnded(now)
	}
	s.clock, s.busy = res.End(), true
	// Metrics first: a client that has its last token may scrape at once.
	s.counters = s.m.observeEngine(s.eng, s.counters)
	for _, ev := range res.Tokens {
		seq := ev.Seq
		if seq.state == stateAborted {
			continue
		}
		st := seq.req.Ref.(*stream)
		s.m.observeToken(ev)
		st.openCached.Store(int64(seq.cachedTokens))
		st.avail.Store(int64(seq.generated))
		if ev.Final {
			s.m.observeFinish(seq, st.reason)
			st.cached = seq.cachedTokens
			st.times = timesOf(seq)
			if s.onFinish != nil {
				s.onFinish(st.requestID, Truth{Queue: st.times.queue, Prefill: st.times.prefill, Decode: st.times.decode})
			}
			if s.spans != nil {
				s.spans.enqueue(requestSpan(st, seq.ID(), s.epoch.Add(s.wallOffset(seq.arrival)), now, s.prof.Model))
			}
			st.done.Store(true)
		}
		if st.eager || ev.Final {
			st.wake()
		}
	}
}

func (s *Server) recordLateness(d time.Duration) {
	d = max(d, 0)
	s.m.stepLateness.Observe(d.Seconds())
	s.latMu.Lock()
	_ = s.lateness.RecordValue(max(int64(d), 1))
	s.latMu.Unlock()
}

// apply carries out a handler's command.
func (s *Server) apply(c command) {
	switch c.kind {
	case cmdAdd:
		seq, err := s.eng.Add(c.st.req, s.virtualNow(time.Now()))
		c.st.seq = seq
		if err == nil {
			s.m.waiting.Set(float64(s.eng.Waiting()))
		}
		c.reply <- err
	case cmdAbort:
		if c.st.seq != nil {
			s.eng.Abort(c.st.seq)
		}
	case cmdInspect:
		c.fn(s.eng)
		c.reply <- nil
	}
}

// inspect runs fn on the scheduler goroutine, after every command sent
// before it, so tests can read the engine without racing it.
func (s *Server) inspect(fn func(*Engine)) error {
	return s.call(command{kind: cmdInspect, fn: fn})
}

// submit hands a stream to the scheduler and waits for admission.
func (s *Server) submit(st *stream) error {
	return s.call(command{kind: cmdAdd, st: st})
}

// call sends a command to the scheduler and waits for its reply, unless
// the server closes first.
func (s *Server) call(c command) error {
	reply := make(chan error, 1)
	c.reply = reply
	select {
	case s.cmds <- c:
	case <-s.done:
		return errClosed
	}
	select {
	case err := <-reply:
		return err
	case <-s.done:
		return errClosed
	}
}

// abort tells the scheduler a stream's client is gone, unless it finished.
func (s *Server) abort(st *stream) {
	if st.done.Load() {
		return
	}
	select {
	case s.cmds <- command{kind: cmdAbort, st: st}:
	case <-s.done:
	}
}
