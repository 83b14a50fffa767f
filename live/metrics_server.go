package live

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// MetricsServer serves Metrics at /metrics for a Prometheus to scrape
// while a run goes on.
type MetricsServer struct {
	srv     *http.Server
	ln      net.Listener
	served  chan error
	scrapes scrapeWaiters
}

// ServeMetrics listens on addr (host:port; port 0 picks a free one) and
// serves m at /metrics until Close.
func ServeMetrics(addr string, m *Metrics) (*MetricsServer, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("serving metrics: %w", err)
	}
	s := &MetricsServer{ln: ln, served: make(chan error, 1)}
	metrics := promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError})
	mux := http.NewServeMux()
	mux.Handle("/metrics", s.scrapes.wrap(metrics))
	s.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { s.served <- s.srv.Serve(ln) }()
	return s, nil
}

// Addr is the address the server listens on, e.g. "127.0.0.1:9100".
func (s *MetricsServer) Addr() string { return s.ln.Addr().String() }

// AwaitScrape waits until a scrape that began after the call has been
// answered, so the scraper holds every value observed before it, or until
// ctx is done. A run calls it at its end (bounded by a linger time) so the
// last seconds reach Prometheus before the endpoint goes away.
func (s *MetricsServer) AwaitScrape(ctx context.Context) error {
	select {
	case <-s.scrapes.next():
		return nil
	case <-ctx.Done():
		return fmt.Errorf("waiting for a final scrape of %s: %w", s.Addr(), ctx.Err())
	}
}

// Close stops serving, letting a scrape in progress finish for up to a
// second.
func (s *MetricsServer) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	err := s.srv.Shutdown(ctx)
	if serr := <-s.served; !errors.Is(serr, http.ErrServerClosed) {
		err = errors.Join(err, serr)
	}
	if err != nil {
		return fmt.Errorf("stopping the metrics server: %w", err)
	}
	return nil
}

// scrapeWaiters lets callers wait for the next scrape to begin and end.
// A waiter's channel is claimed by the first scrape that starts after it
// was made and closed when that scrape has been answered; a scrape already
// running when the waiter arrived may have gathered older values, so it
// does not count.
type scrapeWaiters struct {
	mu      sync.Mutex
	waiting chan struct{}
}

func (w *scrapeWaiters) next() <-chan struct{} {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.waiting == nil {
		w.waiting = make(chan struct{})
	}
	return w.waiting
}

func (w *scrapeWaiters) claim() chan struct{} {
	w.mu.Lock()
	defer w.mu.Unlock()
	ch := w.waiting
	w.waiting = nil
	return ch
}

func (w *scrapeWaiters) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		ch := w.claim()
		h.ServeHTTP(rw, r)
		if ch != nil {
			close(ch)
		}
	})
}
