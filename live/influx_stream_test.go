package live

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// flakySink answers 503 to the first fails posts, then stores lines.
type flakySink struct {
	mu    sync.Mutex
	fails int
	posts int
	lines map[string]int // line → times stored
	got   chan struct{}  // receives after every successful post
}

func (f *flakySink) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	f.mu.Lock()
	defer f.mu.Unlock()
	f.posts++
	if f.posts <= f.fails {
		http.Error(w, "down", http.StatusServiceUnavailable)
		return
	}
	for _, l := range strings.SplitAfter(string(body), "\n") {
		if l != "" {
			f.lines[l]++
		}
	}
	w.WriteHeader(http.StatusNoContent)
	select {
	case f.got <- struct{}{}:
	default:
	}
}

// TestInfluxStreamRetriesUntilDelivered: posts failing while the sink is
// down are retried with the next post; every line arrives, once.
func TestInfluxStreamRetriesUntilDelivered(t *testing.T) {
	t.Parallel()
	sink := &flakySink{fails: 3, lines: map[string]int{}, got: make(chan struct{}, 1)}
	srv := httptest.NewServer(sink)
	defer srv.Close()
	s := StartInfluxStream(srv.URL+"/write?db=d", InfluxStreamOptions{Interval: 10 * time.Millisecond})
	for i := range 5 {
		s.Add(fmt.Appendf(nil, "m v=%di %d\n", i, i))
	}
	select {
	case <-sink.got:
	case <-time.After(10 * time.Second):
		t.Fatal("no post succeeded")
	}
	for i := 5; i < 8; i++ {
		s.Add(fmt.Appendf(nil, "m v=%di %d\n", i, i))
	}
	if err := s.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	sink.mu.Lock()
	defer sink.mu.Unlock()
	if len(sink.lines) != 8 || s.Sent() != 8 {
		t.Errorf("stored %d distinct lines, sent %d, want 8", len(sink.lines), s.Sent())
	}
	for l, n := range sink.lines {
		if n != 1 {
			t.Errorf("%q stored %d times", l, n)
		}
	}
}

// TestInfluxStreamBoundedWhenDown: with the sink down, Add never blocks,
// the buffer keeps the newest lines within its bound, and Close reports
// what was lost.
func TestInfluxStreamBoundedWhenDown(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "down", http.StatusServiceUnavailable)
	}))
	defer srv.Close()
	s := StartInfluxStream(srv.URL+"/write?db=d", InfluxStreamOptions{Interval: time.Hour, MaxBuffer: 100})
	for i := range 1000 {
		s.Add(fmt.Appendf(nil, "m v=%di\n", i)) // 9 to 11 bytes each
	}
	s.mu.Lock()
	held, tail := len(s.pending), strings.HasSuffix(string(s.pending), "m v=999i\n")
	s.mu.Unlock()
	if held > 100 || !tail {
		t.Errorf("buffer holds %d bytes, newest kept %v: want at most 100 and the newest line", held, tail)
	}
	err := s.Close(context.Background())
	if err == nil || !strings.Contains(err.Error(), "1000 lines not delivered") || !strings.Contains(err.Error(), "503") {
		t.Errorf("Close: %v, want the 1000 lost lines and the sink's answer", err)
	}
}
