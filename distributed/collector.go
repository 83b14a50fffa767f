package distributed

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/inferload/inferload/internal/httpguard"
	"github.com/inferload/inferload/rundir"
)

// The files a segment streams to the collector: what Merge reads.
// series.jsonl is rebuilt from the records; summary.json and report.html
// are the merged run's own.
var collectedFiles = map[string]bool{
	rundir.Plan: true, rundir.Experiment: true, rundir.Env: true,
	rundir.Records: true, rundir.RecordsPlain: true, rundir.Events: true, rundir.Telemetry: true, rundir.Spans: true, rundir.Segment: true,
}

// CollectorConfig sets up a collector.
type CollectorConfig struct {
	// Segments is how many segments make the run (N of --segment I/N).
	Segments int
	// Dir is where the segments' files are gathered, one directory each.
	Dir string
	// StartLead is how far ahead of the moment the last segment is ready
	// the common start is set (default 2s): time for every segment to hear
	// it.
	StartLead time.Duration
	// Now is the collector's clock (the CLI's, so tests can set it).
	Now func() time.Time
	// Token, when set, is required on every request as a bearer header
	// (NeedsToken says when it must be set).
	Token string
	// Feed, when set, gets every line the segments send as it arrives:
	// the live view of the whole run.
	Feed *Feed
}

// Collector gathers the run directories of a run's segments as they are
// written, gives them one start once all are ready, and knows when every
// segment has finished. Its handler speaks a small HTTP API (Upload and
// Ready are its client side):
//
//	POST /v1/segments/{i}/ready          wait until all are ready; {"start_at": RFC 3339}
//	PUT  /v1/segments/{i}/files/{name}?offset=K   append bytes at K; {"size": S}
//	POST /v1/segments/{i}/done           the segment finished and sent everything
//	GET  /v1/status                      bytes and state of every segment
//	GET  /v1/clock                       the collector's time, {"now": RFC 3339}
//	GET  /v1/run.tar                     the merged run directory, once merged
//
// Appends are idempotent: a retried upload of bytes already held is
// acknowledged without writing them twice, so a segment that lost its
// connection resends from the last size it heard.
type Collector struct {
	cfg CollectorConfig

	mu      sync.Mutex
	ready   map[int]bool
	done    map[int]bool
	sizes   map[string]int64 // by "i/name"
	seen    map[int]time.Time
	inFl    map[int]int // the requests in flight each segment last reported
	feeds   []*feedState
	startAt time.Time
	// sealed: the collector has stopped gathering (every segment done, or
	// given up) and merges; later calls of a segment are refused.
	sealed bool
	// taken counts the segments' calls in progress, which seal waits for;
	// cutOff: seal waited sealGrace and went on without them.
	taken  sync.WaitGroup
	cutOff bool
	// merged is the merged run directory once there is one, served as
	// GET /v1/run.tar.
	merged  string
	allIn   chan struct{} // closed once every segment is ready
	allDone chan struct{} // closed once every segment is done
	slots   chan struct{} // one per append in progress (maxUploads)
	segMu   []sync.Mutex  // one segment's appends take turns
}

// NewCollector prepares cfg.Dir.
func NewCollector(cfg CollectorConfig) (*Collector, error) {
	if cfg.Segments < 1 {
		return nil, fmt.Errorf("collector: %d segments: want at least 1", cfg.Segments)
	}
	if cfg.StartLead <= 0 {
		cfg.StartLead = 2 * time.Second
	}
	if cfg.Now == nil {
		return nil, errors.New("collector: no clock (CollectorConfig.Now)")
	}
	if err := os.MkdirAll(cfg.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("collector: %w", err)
	}
	for i := range cfg.Segments {
		dir := segmentDir(cfg.Dir, i)
		if held, _ := os.ReadDir(dir); len(held) > 0 {
			// The collector starts from nothing: appending to these
			// would merge an earlier run's lines into this one.
			return nil, fmt.Errorf("collector: %s holds files of an earlier collection: gather in a new --dir", dir)
		}
	}
	c := &Collector{cfg: cfg, ready: map[int]bool{}, done: map[int]bool{}, sizes: map[string]int64{},
		seen: map[int]time.Time{}, inFl: map[int]int{}, allIn: make(chan struct{}), allDone: make(chan struct{}),
		slots: make(chan struct{}, maxUploads), segMu: make([]sync.Mutex, cfg.Segments)}
	for range cfg.Segments {
		c.feeds = append(c.feeds, &feedState{})
	}
	return c, nil
}

// SegmentDir is where segment i's files are gathered.
func (c *Collector) SegmentDir(i int) string { return segmentDir(c.cfg.Dir, i) }

func segmentDir(dir string, i int) string { return filepath.Join(dir, "segment-"+strconv.Itoa(i)) }

// SegmentDirs are every segment's directory, in order.
func (c *Collector) SegmentDirs() []string {
	out := make([]string, c.cfg.Segments)
	for i := range out {
		out[i] = c.SegmentDir(i)
	}
	return out
}

// Done is closed once every segment has reported done.
func (c *Collector) Done() <-chan struct{} { return c.allDone }

// Finished reports how many segments have reported done.
func (c *Collector) Finished() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.done)
}

// Handler is the collector's HTTP API.
func (c *Collector) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/segments/{i}/ready", c.handleReady)
	mux.HandleFunc("PUT /v1/segments/{i}/files/{name}", c.handleFile)
	mux.HandleFunc("POST /v1/segments/{i}/done", c.handleDone)
	mux.HandleFunc("GET /v1/status", c.handleStatus)
	mux.HandleFunc("GET /v1/clock", c.handleClock)
	mux.HandleFunc("GET "+RunTarPath, c.handleRunTar)
	return httpguard.Policy{Token: c.cfg.Token, Realm: "inferload collector",
		NoToken: errNoToken.Error(), WrongToken: errWrongToken.Error(),
		BodyTypes: []string{uploadType}, MaxBody: maxUpload}.Wrap(mux)
}

// segment reads the path's segment index, answering 400 when it is not
// one, and 410 once the collector has stopped gathering. A call it lets
// through counts as taken until its done (called at the handler's end)
// runs, and seal waits for it.
func (c *Collector) segment(w http.ResponseWriter, r *http.Request) (i int, done func(), ok bool) {
	i, err := strconv.Atoi(r.PathValue("i"))
	if err != nil || i < 0 || i >= c.cfg.Segments {
		http.Error(w, fmt.Sprintf("segment %q: want 0..%d", r.PathValue("i"), c.cfg.Segments-1), http.StatusBadRequest)
		return 0, nil, false
	}
	c.mu.Lock()
	sealed := c.sealed
	if !sealed {
		c.taken.Add(1) // before seal's Wait: the seal is set under the same lock
	}
	c.mu.Unlock()
	if sealed {
		http.Error(w, errSealed.Error(), http.StatusGone)
		return 0, nil, false
	}
	return i, c.taken.Done, true
}

// seal stops the gathering: what the segments sent is what is merged.
// Calls already taken get sealGrace to finish (as a server's shutdown
// gives them); later ones are answered 410, and an append still going
// after the grace (a segment cut off mid-upload) writes no further
// piece: the merge reads its file as a killed segment's.
func (c *Collector) seal() {
	c.mu.Lock()
	c.sealed = true
	c.mu.Unlock()
	finished := make(chan struct{})
	go func() { c.taken.Wait(); close(finished) }()
	t := time.NewTimer(sealGrace)
	defer t.Stop()
	select {
	case <-finished:
	case <-t.C:
		c.mu.Lock()
		c.cutOff = true
		c.mu.Unlock()
	}
}

// sealGrace is how long seal waits for the calls in progress.
const sealGrace = 2 * time.Second

// isCutOff reports whether seal went on without the appends in progress.
func (c *Collector) isCutOff() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.cutOff
}

// errSealed answers a segment's call that came after the seal.
var errSealed = errors.New("the collector has stopped gathering and merged what it got: this segment's own run directory holds the rest (inferload merge)")

// publish serves dir, the merged run directory, as GET /v1/run.tar.
func (c *Collector) publish(dir string) {
	c.mu.Lock()
	c.merged = dir
	c.mu.Unlock()
}

func (c *Collector) handleReady(w http.ResponseWriter, r *http.Request) {
	i, taken, ok := c.segment(w, r)
	if !ok {
		return
	}
	taken() // the wait below may last until the collector stops: not a call to wait for
	c.mu.Lock()
	c.ready[i] = true
	if len(c.ready) == c.cfg.Segments && c.startAt.IsZero() {
		c.startAt = c.cfg.Now().Add(c.cfg.StartLead)
		close(c.allIn)
	}
	c.mu.Unlock()
	select {
	case <-c.allIn:
	case <-r.Context().Done():
		return
	}
	c.mu.Lock()
	at := c.startAt
	c.mu.Unlock()
	writeJSON(w, map[string]string{"start_at": at.UTC().Format(time.RFC3339Nano)})
}

// maxUpload bounds one append (the guard refuses a longer body with
// 413): a segment uploads about a second of lines, and more in pieces of
// this size when it catches up.
const maxUpload = 16 << 20

// uploadType is the media type of an append's body: a file's raw bytes.
const uploadType = "application/octet-stream"

// maxUploads bounds the appends the collector takes at once; more wait
// their turn (each segment sends one at a time).
const maxUploads = 8

// feedChunk is how much of an append is written and fed at a time: the
// collector's memory per append, whatever its size.
const feedChunk = 256 << 10

func (c *Collector) handleFile(w http.ResponseWriter, r *http.Request) {
	i, taken, ok := c.segment(w, r)
	if !ok {
		return
	}
	defer taken()
	name := r.PathValue("name")
	if !collectedFiles[name] {
		http.Error(w, fmt.Sprintf("file %q is not one a segment sends", name), http.StatusBadRequest)
		return
	}
	offset, err := strconv.ParseInt(r.URL.Query().Get("offset"), 10, 64)
	if err != nil || offset < 0 {
		http.Error(w, "offset: want a byte offset", http.StatusBadRequest)
		return
	}
	select {
	case c.slots <- struct{}{}:
		defer func() { <-c.slots }()
	case <-r.Context().Done():
		return
	}
	if n, err := strconv.Atoi(r.Header.Get(inFlightHeader)); err == nil && n >= 0 {
		c.mu.Lock()
		c.inFl[i] = n
		c.mu.Unlock()
	}
	size, err := c.appendAt(i, name, offset, r.Body)
	if errors.Is(err, errSealed) {
		http.Error(w, err.Error(), http.StatusGone)
		return
	}
	if errors.Is(err, errGap) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusConflict)
		_ = json.NewEncoder(w).Encode(map[string]int64{"size": size})
		return
	}
	if tooBig, ok := errors.AsType[*http.MaxBytesError](err); ok {
		http.Error(w, fmt.Sprintf("upload: body over %d bytes (kept the first %d of the file)", tooBig.Limit, size), http.StatusRequestEntityTooLarge)
		return
	}
	if _, ok := errors.AsType[*cutError](err); ok {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	writeJSON(w, map[string]int64{"size": size})
}

// errGap: an upload starts beyond what the collector holds.
var errGap = errors.New("upload starts beyond the collected size")

// appendAt writes the part of body that lies beyond what is held,
// feedChunk at a time (memory does not grow with the upload), feeding
// each piece to the live view, and returns the size held now. Appends to
// one segment take turns, so its lines reach the Feed in file order.
func (c *Collector) appendAt(i int, name string, offset int64, body io.Reader) (int64, error) {
	c.segMu[i].Lock()
	defer c.segMu[i].Unlock()
	key := strconv.Itoa(i) + "/" + name
	c.mu.Lock()
	c.seen[i] = c.cfg.Now()
	size := c.sizes[key]
	c.mu.Unlock()
	if offset > size {
		return size, errGap
	}
	// Bytes held already are read and dropped: a retried upload.
	if skip := size - offset; skip > 0 {
		if n, err := io.CopyN(io.Discard, body, skip); n < skip {
			if errors.Is(err, io.EOF) {
				return size, nil // all of it is held already
			}
			return size, &cutError{err}
		}
	}
	path := filepath.Join(c.SegmentDir(i), name)
	var f *os.File
	defer func() {
		if f != nil {
			f.Close()
		}
	}()
	bp := chunks.Get().(*[]byte)
	defer chunks.Put(bp)
	buf := *bp
	for {
		n, rerr := fill(body, buf)
		if n > 0 && c.isCutOff() {
			return size, errSealed
		}
		if n > 0 && f == nil {
			var err error
			if f, err = openAppend(path); err != nil {
				return size, err
			}
		}
		if n > 0 {
			m, werr := f.Write(buf[:n])
			c.mu.Lock()
			c.sizes[key] += int64(m)
			size = c.sizes[key]
			c.mu.Unlock()
			if m > 0 && name != rundir.Segment {
				c.feed(i, name, buf[:m], nil)
			}
			if werr != nil {
				return size, werr
			}
		}
		if rerr == io.EOF {
			break
		}
		if rerr != nil {
			return size, &cutError{rerr}
		}
	}
	if f == nil {
		return size, nil
	}
	err := f.Close()
	f = nil
	if err == nil && name == rundir.Segment {
		// Written whole before the first upload: the feed parses what is held.
		c.feed(i, name, nil, func() []byte {
			b, _ := os.ReadFile(path)
			return b
		})
	}
	return size, err
}

// chunks are the appends' buffers (at most maxUploads in use at once).
var chunks = sync.Pool{New: func() any { b := make([]byte, feedChunk); return &b }}

// cutError is an append whose body could not be read to its end: the
// segment's doing (cut off, or over maxUpload), not the collector's.
type cutError struct{ err error }

func (e *cutError) Error() string { return "reading the upload: " + e.err.Error() }
func (e *cutError) Unwrap() error { return e.err }

// fill reads r into buf until buf is full or r fails (io.EOF at its end).
func fill(r io.Reader, buf []byte) (int, error) {
	n := 0
	for n < len(buf) {
		m, err := r.Read(buf[n:])
		n += m
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// openAppend opens path to append, making its directory.
func openAppend(path string) (*os.File, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, err
	}
	return os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
}

func (c *Collector) handleDone(w http.ResponseWriter, r *http.Request) {
	i, taken, ok := c.segment(w, r)
	if !ok {
		return
	}
	defer taken()
	c.mu.Lock()
	if !c.done[i] {
		c.done[i] = true
		if len(c.done) == c.cfg.Segments {
			close(c.allDone)
		}
	}
	c.mu.Unlock()
	w.WriteHeader(http.StatusNoContent)
}

// SegmentStatus is one segment's state, as GET /v1/status reports it.
type SegmentStatus struct {
	Segment int              `json:"segment"`
	Ready   bool             `json:"ready"`
	Done    bool             `json:"done"`
	Bytes   map[string]int64 `json:"bytes"`
	// LastSeen is when the segment last sent bytes (zero: never).
	LastSeen time.Time `json:"last_seen,omitzero"`
	// InFlight is the requests in flight it last reported, -1 before it
	// did.
	InFlight int `json:"in_flight"`
}

// Status is every segment's state.
func (c *Collector) Status() []SegmentStatus {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]SegmentStatus, c.cfg.Segments)
	for i := range out {
		out[i] = SegmentStatus{Segment: i, Ready: c.ready[i], Done: c.done[i], Bytes: map[string]int64{}, LastSeen: c.seen[i], InFlight: -1}
		if n, ok := c.inFl[i]; ok {
			out[i].InFlight = n
		}
		for name := range collectedFiles {
			if n := c.sizes[strconv.Itoa(i)+"/"+name]; n > 0 {
				out[i].Bytes[name] = n
			}
		}
	}
	return out
}

func (c *Collector) handleClock(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, map[string]string{"now": c.cfg.Now().UTC().Format(time.RFC3339Nano)})
}

func (c *Collector) handleStatus(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, c.Status())
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

// Serve serves the collector on l until ctx is done, then shuts down,
// waiting for open requests (a segment waiting to start gets cut off).
func (c *Collector) Serve(ctx context.Context, l net.Listener) error {
	// Requests live in ctx, so a segment waiting to start is let go when
	// the collector stops rather than holding up the shutdown.
	srv := &http.Server{Handler: c.Handler(), ReadHeaderTimeout: 10 * time.Second,
		BaseContext: func(net.Listener) context.Context { return ctx }}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(l) }()
	<-ctx.Done()
	// Uploads in progress get a moment to finish. A connection a client
	// opened but never used (its transport dials ahead) counts as busy to
	// Shutdown for 5 s; past the moment it is simply closed: every segment
	// has said done or been given up by then.
	shut, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	var err error
	if serr := srv.Shutdown(shut); errors.Is(serr, context.DeadlineExceeded) {
		err = srv.Close()
	} else {
		err = serr
	}
	if serr := <-errc; !errors.Is(serr, http.ErrServerClosed) {
		err = errors.Join(err, serr)
	}
	return err
}
