package dist

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
	allIn   chan struct{} // closed once every segment is ready
	allDone chan struct{} // closed once every segment is done
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
	c := &Collector{cfg: cfg, ready: map[int]bool{}, done: map[int]bool{}, sizes: map[string]int64{},
		seen: map[int]time.Time{}, inFl: map[int]int{}, allIn: make(chan struct{}), allDone: make(chan struct{})}
	for range cfg.Segments {
		c.feeds = append(c.feeds, &feedState{})
	}
	return c, nil
}

// SegmentDir is where segment i's files are gathered.
func (c *Collector) SegmentDir(i int) string {
	return filepath.Join(c.cfg.Dir, "segment-"+strconv.Itoa(i))
}

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
	return requireToken(c.cfg.Token, mux)
}

// segment reads the path's segment index, answering 400 when it is not one.
func (c *Collector) segment(w http.ResponseWriter, r *http.Request) (int, bool) {
	i, err := strconv.Atoi(r.PathValue("i"))
	if err != nil || i < 0 || i >= c.cfg.Segments {
		http.Error(w, fmt.Sprintf("segment %q: want 0..%d", r.PathValue("i"), c.cfg.Segments-1), http.StatusBadRequest)
		return 0, false
	}
	return i, true
}

func (c *Collector) handleReady(w http.ResponseWriter, r *http.Request) {
	i, ok := c.segment(w, r)
	if !ok {
		return
	}
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

// maxUpload bounds one append: a segment uploads about a second of lines.
const maxUpload = 256 << 20

func (c *Collector) handleFile(w http.ResponseWriter, r *http.Request) {
	i, ok := c.segment(w, r)
	if !ok {
		return
	}
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
	body, err := io.ReadAll(io.LimitReader(r.Body, maxUpload+1))
	if err != nil || len(body) > maxUpload {
		http.Error(w, "upload too large or cut short", http.StatusBadRequest)
		return
	}
	if n, err := strconv.Atoi(r.Header.Get(inFlightHeader)); err == nil && n >= 0 {
		c.mu.Lock()
		c.inFl[i] = n
		c.mu.Unlock()
	}
	size, added, err := c.appendAt(i, name, offset, body)
	if len(added) > 0 {
		c.feed(i, name, added, func() []byte {
			b, _ := os.ReadFile(filepath.Join(c.SegmentDir(i), name))
			return b
		})
	}
	if errors.Is(err, errGap) {
		w.WriteHeader(http.StatusConflict)
		writeJSON(w, map[string]int64{"size": size})
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

// appendAt writes the part of body that lies beyond what is held, and
// returns the size held now and the bytes it added.
func (c *Collector) appendAt(i int, name string, offset int64, body []byte) (int64, []byte, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.seen[i] = c.cfg.Now()
	key := strconv.Itoa(i) + "/" + name
	size := c.sizes[key]
	if offset > size {
		return size, nil, errGap
	}
	skip := size - offset
	if skip >= int64(len(body)) {
		return size, nil, nil // all of it is held already
	}
	dir := c.SegmentDir(i)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return size, nil, err
	}
	f, err := os.OpenFile(filepath.Join(dir, name), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return size, nil, err
	}
	n, err := f.Write(body[skip:])
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	c.sizes[key] = size + int64(n)
	return c.sizes[key], body[skip : skip+int64(n)], err
}

func (c *Collector) handleDone(w http.ResponseWriter, r *http.Request) {
	i, ok := c.segment(w, r)
	if !ok {
		return
	}
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
