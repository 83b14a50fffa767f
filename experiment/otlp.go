package experiment

import (
	"context"
	"errors"
	"fmt"
	"net"
	"path/filepath"
	"reflect"
	"sync"
	"time"

	"github.com/inferload/inferload/observe"
	"github.com/inferload/inferload/plan"
	"github.com/inferload/inferload/record"
	"github.com/inferload/inferload/rundir"
)

// spanReceiver owns a run's OTLP receiver and spans.jsonl, and knows which
// successful requests still wait for their span, so the wait after the
// run ends as soon as none does.
type spanReceiver struct {
	rcv    *observe.OTLPReceiver
	out    *rundir.JSONLWriter
	redact record.Redactor // a span's name and attribute names are the server's words

	mu sync.Mutex
	// seen holds the trace ids of spans with phases received; pending
	// those of successful records whose span has not come yet.
	seen, pending map[string]bool
	changed       chan struct{} // a pending id was resolved
	err           error
}

// otlpListener is the socket the run's OTLP receiver serves on:
// Options.OTLPListener, or one listening on observe.otlp_listen; nil when
// the run does not listen for spans.
func otlpListener(p *plan.Plan, opts Options) (net.Listener, error) {
	if opts.OTLPListener != nil || p.Observe.OTLPListen == "" {
		return opts.OTLPListener, nil
	}
	ln, err := net.Listen("tcp", p.Observe.OTLPListen)
	if err != nil {
		return nil, fmt.Errorf("observe.otlp_listen: %w", err)
	}
	return ln, nil
}

// startSpans opens spans.jsonl and starts the receiver on ln.
func startSpans(r *runner, ln net.Listener) (*spanReceiver, error) {
	out, err := rundir.NewJSONLWriter(filepath.Join(r.dir, rundir.Spans))
	if err != nil {
		return nil, err
	}
	s := &spanReceiver{out: out, redact: planRedactor(r.p, r.opts.Env.withDefaults()), seen: map[string]bool{}, pending: map[string]bool{}, changed: make(chan struct{}, 1)}
	s.rcv, err = observe.ListenOTLP(observe.OTLPConfig{Listener: ln, OnSpan: s.onSpan})
	if err != nil {
		_ = out.Close()
		return nil, err
	}
	if r.opts.OTLPListening != nil {
		r.opts.OTLPListening(s.rcv.Addr())
	}
	return s, nil
}

// onSpan keeps one span (the receiver serialises the calls).
func (s *spanReceiver) onSpan(sp record.Span) {
	if !s.redact.Empty() {
		redactStrings(reflect.ValueOf(&sp), s.redact)
	}
	err := s.out.Write(sp)
	s.mu.Lock()
	defer s.mu.Unlock()
	if err != nil && s.err == nil {
		s.err = err
	}
	if _, ok := sp.ServerTime(); !ok || sp.TraceID == "" {
		return
	}
	s.seen[sp.TraceID] = true
	if s.pending[sp.TraceID] {
		delete(s.pending, sp.TraceID)
		select {
		case s.changed <- struct{}{}:
		default:
		}
	}
}

// expect notes a finished request: a successful one with a join key
// (chains aside, whose calls are several server requests) waits for its
// span unless it already came.
func (s *spanReceiver) expect(res *record.Result) {
	if !res.OK() || res.TraceID == "" || len(res.Chain) > 0 {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.seen[res.TraceID] {
		s.pending[res.TraceID] = true
	}
}

// missing is how many successful requests still wait for their span.
func (s *spanReceiver) missing() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.pending)
}

// wait waits up to d for the spans still to come; it returns at once when
// none is missing, and when ctx ends (a stopped run does not wait).
func (s *spanReceiver) wait(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	for s.missing() > 0 {
		select {
		case <-s.changed:
		case <-t.C:
			return
		case <-ctx.Done():
			return
		}
	}
}

// close stops the receiver and closes spans.jsonl. A refused export is
// noted in events.jsonl (the first one's reason), at the run's end.
func (s *spanReceiver) close(events *rundir.JSONLWriter, endUS int64) error {
	cerr := s.rcv.Close()
	st := s.rcv.Stats()
	var werr error
	if st.Rejected > 0 {
		werr = events.Write(record.Event{TimeUS: endUS, Kind: record.EventNote,
			Message: fmt.Sprintf("otlp: %d export request(s) refused; the first: %s", st.Rejected, st.FirstError)})
	}
	s.mu.Lock()
	err := s.err
	s.mu.Unlock()
	return errors.Join(err, werr, s.out.Close(), cerr)
}
