package live

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/inferload/inferload/internal/httpguard"
	"github.com/inferload/inferload/record"
)

// Control is what the page and the API can do to a run. The CLI builds
// it from the run's cancel functions and its experiment.Steering.
type Control interface {
	// Stop is a graceful stop, as Ctrl-C: no new requests, in-flight
	// ones get the plan's grace.
	Stop()
	// Abort cancels the requests in flight too (a second Ctrl-C).
	Abort()
	// SetLoad sets the users (closed loop) or requests/s (open loop).
	SetLoad(level float64) error
	Pause() error
	Resume() error
	// Note adds a note to the run's events on the run clock.
	Note(text string) (record.Event, error)
	// Load is the load now.
	Load() LoadState
}

// LoadState is the run's load as the page shows it.
type LoadState struct {
	Steerable bool    `json:"steerable"`
	Mode      string  `json:"mode"`
	Level     float64 `json:"level"`
	// MaxLevel is the highest level the run takes from the page (the
	// plan's own bound, docs/live.md); 0 when the run is not steered.
	MaxLevel float64 `json:"max_level,omitempty"`
	Paused   bool    `json:"paused"`
	Stopping bool    `json:"stopping"`
	// Fixed, when set, is why the run cannot be steered, stopped or
	// noted from this page (a distributed run's collector): stop and
	// abort answer 409 with it, as the other controls do.
	Fixed string `json:"fixed,omitempty"`
}

// SegmentProgress is one segment of a distributed run as its collector's
// page shows it (docs/distributed.md#live-view defines the states).
type SegmentProgress struct {
	Segment string `json:"segment"` // I/N
	// State is waiting, ready, running, silent or done.
	State     string  `json:"state"`
	Completed int64   `json:"completed"`
	Failed    int64   `json:"failed"`
	Late      int64   `json:"late"`
	ReqPerS   float64 `json:"req_per_s"`
	// InFlight is what the segment last reported, -1 before it did.
	InFlight int `json:"in_flight"`
	// LastSeenS is how long ago it last sent anything, -1 if never.
	LastSeenS float64 `json:"last_seen_s"`
	// ClientCPUPct is its latest client_cpu_pct sample, -1 before one.
	ClientCPUPct float64 `json:"client_cpu_pct"`
}

// UIOptions configure ServeUI.
type UIOptions struct {
	// Token is required on every request that changes the run, on
	// loopback too (header "Authorization: Bearer TOKEN", or ?token=
	// once, which sets a cookie for the page); "" generates one. On a
	// loopback address the page and its figures are open without it,
	// read-only (State.Locked); elsewhere every request needs it.
	Token string
	// Every is the page's update period (default 1s).
	Every time.Duration
	// Segments, when set, is the per-segment table of a distributed run.
	Segments func() []SegmentProgress
}

// UIServer serves the live page, its JSON API and its event stream.
type UIServer struct {
	srv    *http.Server
	ln     net.Listener
	served chan error
	sess   atomic.Pointer[session] // the run shown; nil before a launcher starts one
	token  string
	// openReads: the page and its figures need no token (a loopback
	// listener of ServeUI).
	openReads bool
	every     time.Duration

	ticker   chan struct{} // closed by stopTick
	tickDone chan struct{}
	mu       sync.Mutex
	tick     chan struct{} // closed and replaced on every tick
	closing  bool
}

// session is one run as the UI shows and steers it.
type session struct {
	mon  *Monitor
	ctl  Control
	segs func() []SegmentProgress
}

// ServeUI listens on addr and serves the live UI of the run m watches,
// controlled through c, until Close.
func ServeUI(addr string, m *Monitor, c Control, o UIOptions) (*UIServer, error) {
	s, err := listenUI(addr, o)
	if err != nil {
		return nil, err
	}
	s.openReads = httpguard.IsLoopback(s.ln.Addr())
	s.sess.Store(&session{mon: m, ctl: c, segs: o.Segments})
	s.start(s.guard(s.routes()))
	return s, nil
}

// listenUI opens the listener and decides the token (o.Token, or one
// generated: the UI and the launcher change runs, so neither goes
// without one, on loopback either); start serves.
func listenUI(addr string, o UIOptions) (*UIServer, error) {
	token := o.Token
	if token == "" {
		var err error
		if token, err = httpguard.NewToken(); err != nil {
			return nil, err
		}
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("serving the live UI: %w", err)
	}
	s := &UIServer{ln: ln, served: make(chan error, 1), token: token, every: o.Every,
		ticker: make(chan struct{}), tickDone: make(chan struct{}), tick: make(chan struct{})}
	if s.every <= 0 {
		s.every = time.Second
	}
	return s, nil
}

func (s *UIServer) start(h http.Handler) {
	s.srv = &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go s.ticks()
	go func() { s.served <- s.srv.Serve(s.ln) }()
}

// Addr is the address the server listens on.
func (s *UIServer) Addr() string { return s.ln.Addr().String() }

// Token is the token the UI's changes need.
func (s *UIServer) Token() string { return s.token }

// URL is the page's address with its token. A
// listener on every interface (0.0.0.0, [::]) gives 127.0.0.1's, which a
// browser can open; ListenNote says so.
func (s *UIServer) URL() string {
	return s.BaseURL() + "?token=" + s.token
}

// BaseURL is URL without the token.
func (s *UIServer) BaseURL() string {
	u, _ := httpguard.BrowseURL(s.ln.Addr())
	return u
}

// ListenNote is "" or what to tell the user about the address URL
// gives: that the UI listens on every interface.
func (s *UIServer) ListenNote() string {
	_, note := httpguard.BrowseURL(s.ln.Addr())
	return note
}

// Close sends the final state to the open pages (waiting up to 2 s for
// them to get it), then stops serving.
func (s *UIServer) Close() error {
	s.mu.Lock()
	s.closing = true
	s.mu.Unlock()
	close(s.ticker)
	<-s.tickDone
	s.broadcast()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	err := s.srv.Shutdown(ctx)
	if errors.Is(err, context.DeadlineExceeded) {
		err = s.srv.Close()
	}
	if serr := <-s.served; !errors.Is(serr, http.ErrServerClosed) {
		err = errors.Join(err, serr)
	}
	if err != nil {
		return fmt.Errorf("stopping the live UI: %w", err)
	}
	return nil
}

// ticks closes the monitor's seconds and wakes the event streams.
func (s *UIServer) ticks() {
	defer close(s.tickDone)
	t := time.NewTicker(s.every)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			if sess := s.sess.Load(); sess != nil {
				sess.mon.Tick()
			}
			s.broadcast()
		case <-s.ticker:
			return
		}
	}
}

func (s *UIServer) broadcast() {
	s.mu.Lock()
	defer s.mu.Unlock()
	close(s.tick)
	s.tick = make(chan struct{})
}

// nextTick is the channel the next tick closes, and whether the server
// is closing (the stream sends once more and ends).
func (s *UIServer) nextTick() (<-chan struct{}, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.tick, s.closing
}

// tokenCookie, with the port after it, names the cookie that carries the
// token for the page's own requests once it was opened with ?token=.
// Browsers keep cookies per host, not per port: two UIs on 127.0.0.1
// would otherwise replace each other's.
const tokenCookie = "inferload_ui_token_"

// cookieName is the token cookie's name for the listener's port.
func (s *UIServer) cookieName() string {
	if s.ln == nil {
		return tokenCookie
	}
	_, port, _ := net.SplitHostPort(s.ln.Addr().String())
	return tokenCookie + port
}

// guard is the shared guard (internal/httpguard) with the UI's policy:
// the token on every change, and on every read but a loopback UI's; no
// cross-origin change; JSON bodies of at most httpguard.DefaultMaxBody.
func (s *UIServer) guard(next http.Handler) http.Handler {
	return httpguard.Policy{Token: s.token, OpenReads: s.openReads, Cookie: s.cookieName(), Realm: "inferload UI",
		NoToken: "a token is required: open the URL inferload printed (with its ?token=), or send Authorization: Bearer TOKEN"}.Wrap(next)
}

func (s *UIServer) routes() *http.ServeMux {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", servePage)
	mux.HandleFunc("GET /assets/{name}", serveAsset)
	mux.HandleFunc("GET /api/state", s.withSession(s.state))
	mux.HandleFunc("GET /api/events", s.withSession(s.events))
	mux.HandleFunc("POST /api/stop", s.withSession(stop))
	mux.HandleFunc("POST /api/abort", s.withSession(abort))
	mux.HandleFunc("POST /api/load", s.withSession(setLoad))
	mux.HandleFunc("POST /api/pause", s.withSession(pause))
	mux.HandleFunc("POST /api/resume", s.withSession(resume))
	mux.HandleFunc("POST /api/note", s.withSession(note))
	return mux
}

// State is GET /api/state and every message of /api/events: the
// monitor's view and the load.
type State struct {
	View
	Load LoadState `json:"load"`
	// Segments are a distributed run's segments (none for one process).
	Segments []SegmentProgress `json:"segments,omitempty"`
	// Locked: this reader came without the token, so the page shows its
	// controls off (the run's changes need the URL with the token).
	Locked bool `json:"locked"`
}

// current is the state of sess as the reader of r sees it.
func current(r *http.Request, sess *session, since, telSince int64) State {
	st := State{View: sess.mon.View(since, telSince), Load: sess.ctl.Load(), Locked: httpguard.Locked(r)}
	if sess.segs != nil {
		st.Segments = sess.segs()
	}
	return st
}

// withSession answers 404 while no run is shown (a launcher before its
// first run), else calls h with the run.
func (s *UIServer) withSession(h func(http.ResponseWriter, *http.Request, *session)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		sess := s.sess.Load()
		if sess == nil {
			writeError(w, http.StatusNotFound, errors.New("no run has been started"))
			return
		}
		h(w, r, sess)
	}
}

// state answers GET /api/state[?since=N&tel_since=M].
func (s *UIServer) state(w http.ResponseWriter, r *http.Request, sess *session) {
	q := r.URL.Query()
	since, err := countParam(q.Get("since"), "since")
	if err != nil {
		writeError(w, http.StatusBadRequest, err)
		return
	}
	telSince, err := countParam(q.Get("tel_since"), "tel_since")
	if err != nil {
		writeError(w, http.StatusBadRequest, err)
		return
	}
	writeJSON(w, http.StatusOK, current(r, sess, since, telSince))
}

// countParam reads a query parameter that numbers points or samples: a
// whole number from 0 ("" is 0: everything kept). One past what the run
// has is not an error: nothing new is sent.
func countParam(v, name string) (int64, error) {
	if v == "" {
		return 0, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("%s=%.40q: want a whole number from 0 (the seq or tel_seq of the last answer)", name, v)
	}
	return n, nil
}

// events streams the state as server-sent events, one message a tick;
// each message holds only the points the page has not had.
func (s *UIServer) events(w http.ResponseWriter, r *http.Request, sess *session) {
	fl, ok := w.(http.Flusher)
	if !ok {
		http.Error(w, "streaming unsupported", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	var since, telSince int64
	for {
		tick, closing := s.nextTick()
		st := current(r, sess, since, telSince)
		since, telSince = st.Seq, st.TelSeq
		b, err := json.Marshal(st)
		if err != nil {
			return
		}
		if _, err := fmt.Fprintf(w, "data: %s\n\n", b); err != nil {
			return
		}
		fl.Flush()
		if closing {
			return
		}
		select {
		case <-tick:
		case <-r.Context().Done():
			return
		}
	}
}

func stop(w http.ResponseWriter, _ *http.Request, sess *session) {
	endRun(w, sess, "stop", sess.ctl.Stop)
}

func abort(w http.ResponseWriter, _ *http.Request, sess *session) {
	endRun(w, sess, "abort", sess.ctl.Abort)
}

// endRun ends the run as the page asked (what: stop or abort), marking
// the request as a stop event, unless the run cannot be stopped from it.
func endRun(w http.ResponseWriter, sess *session, what string, end func()) {
	if refused(w, sess) {
		return
	}
	sess.mon.Mark(sess.mon.Elapsed(), "stop", what+" requested from the UI")
	end()
	writeJSON(w, http.StatusAccepted, sess.ctl.Load())
}

// refused answers 409 when the run cannot be stopped from the page.
func refused(w http.ResponseWriter, sess *session) bool {
	if why := sess.ctl.Load().Fixed; why != "" {
		writeError(w, http.StatusConflict, errors.New(why))
		return true
	}
	return false
}

// loadRequest is POST /api/load's body: the new users or requests/s.
type loadRequest struct {
	Level *float64 `json:"level"`
}

func setLoad(w http.ResponseWriter, r *http.Request, sess *session) {
	var req loadRequest
	if !readJSON(w, r, &req) {
		return
	}
	if req.Level == nil {
		writeError(w, http.StatusBadRequest, errors.New(`the body needs "level": the users or requests/s to run`))
		return
	}
	before := sess.ctl.Load()
	if lv := *req.Level; !(lv > 0) {
		writeError(w, http.StatusBadRequest, fmt.Errorf("level %g: want a load above 0", lv))
		return
	} else if before.MaxLevel > 0 && lv > before.MaxLevel {
		unit := unitOf(before.Mode)
		writeError(w, http.StatusBadRequest, fmt.Errorf("%g %s is over this run's limit of %g %s, set by its plan (docs/live.md#steering-a-run-and-what-the-run-directory-keeps)", lv, unit, before.MaxLevel, unit))
		return
	}
	if err := sess.ctl.SetLoad(*req.Level); err != nil {
		writeError(w, http.StatusConflict, err)
		return
	}
	after := sess.ctl.Load()
	if after.Level != before.Level {
		sess.mon.Mark(sess.mon.Elapsed(), "load", fmt.Sprintf("%s %g → %g", unitOf(after.Mode), before.Level, after.Level))
	}
	writeJSON(w, http.StatusOK, after)
}

func unitOf(mode string) string {
	if mode == record.ModeOpen {
		return "requests/s"
	}
	return "users"
}

func pause(w http.ResponseWriter, _ *http.Request, sess *session) {
	toggle(w, sess, sess.ctl.Pause, "paused")
}

func resume(w http.ResponseWriter, _ *http.Request, sess *session) {
	toggle(w, sess, sess.ctl.Resume, "resumed")
}

func toggle(w http.ResponseWriter, sess *session, do func() error, what string) {
	if err := do(); err != nil {
		writeError(w, http.StatusConflict, err)
		return
	}
	sess.mon.Mark(sess.mon.Elapsed(), "load", what)
	writeJSON(w, http.StatusOK, sess.ctl.Load())
}

// noteRequest is POST /api/note's body.
type noteRequest struct {
	Text string `json:"text"`
}

// maxNoteLen bounds a note's text.
const maxNoteLen = 2000

func note(w http.ResponseWriter, r *http.Request, sess *session) {
	var req noteRequest
	if !readJSON(w, r, &req) {
		return
	}
	if len(req.Text) > maxNoteLen {
		writeError(w, http.StatusBadRequest, fmt.Errorf("note: %d bytes, at most %d", len(req.Text), maxNoteLen))
		return
	}
	e, err := sess.ctl.Note(req.Text)
	if err != nil {
		writeError(w, http.StatusConflict, err)
		return
	}
	sess.mon.Mark(time.Duration(e.TimeUS)*time.Microsecond, "note", e.Message)
	writeJSON(w, http.StatusOK, e)
}

// readJSON decodes the JSON body into v, answering 400 when it cannot
// and 413 when it is over the guard's limit.
func readJSON(w http.ResponseWriter, r *http.Request, v any) bool {
	if code, err := httpguard.DecodeJSON(r, v); err != nil {
		writeError(w, code, err)
		return false
	}
	return true
}

func writeJSON(w http.ResponseWriter, code int, v any) { httpguard.WriteJSON(w, code, v) }

func writeError(w http.ResponseWriter, code int, err error) { httpguard.Error(w, code, err) }
