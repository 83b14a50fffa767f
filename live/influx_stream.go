package live

import (
	"bytes"
	"context"
	"fmt"
	"sync"
	"time"
)

// InfluxStreamOptions configure StartInfluxStream; zero values are the
// defaults.
type InfluxStreamOptions struct {
	// Token is sent as "Authorization: Token …" when set.
	Token string
	// Interval is the time between posts (default 5s).
	Interval time.Duration
	// MaxBuffer bounds the lines held while the sink is down, in bytes
	// (default 8 MiB, about a day of one-second windows); beyond it the
	// oldest lines are dropped and counted.
	MaxBuffer int
	// Timeout bounds one post (default 10s).
	Timeout time.Duration
}

// InfluxStream posts line protocol to an InfluxDB write URL every
// Interval while a run goes on. Add never blocks the run: lines wait in a
// bounded buffer, a failed post is retried with the next one (the same
// lines, so InfluxDB, which keeps one point per series and timestamp,
// stores them once), and when the sink stays down the oldest lines are
// dropped, counted, and reported by Close.
type InfluxStream struct {
	url   string
	o     InfluxStreamOptions
	posts *interval

	mu       sync.Mutex
	pending  []byte // whole lines, oldest first
	dropped  int    // lines dropped for the buffer bound
	lastErr  error
	failures int
	sent     int // lines delivered
}

// StartInfluxStream starts posting to url (see PostInflux for its form).
func StartInfluxStream(url string, o InfluxStreamOptions) *InfluxStream {
	if o.Interval <= 0 {
		o.Interval = 5 * time.Second
	}
	if o.MaxBuffer <= 0 {
		o.MaxBuffer = 8 << 20
	}
	if o.Timeout <= 0 {
		o.Timeout = 10 * time.Second
	}
	s := &InfluxStream{url: url, o: o}
	s.posts = startInterval(o.Interval, func() { s.flush(context.Background()) })
	return s
}

// Add queues whole lines of line protocol (each ending in '\n').
func (s *InfluxStream) Add(lines []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pending = append(s.pending, lines...)
	for len(s.pending) > s.o.MaxBuffer {
		i := bytes.IndexByte(s.pending, '\n')
		if i < 0 {
			s.pending = s.pending[:0]
			s.dropped++
			break
		}
		s.pending = s.pending[i+1:]
		s.dropped++
	}
}

// interval is the background half of a sink that posts on an interval
// (InfluxStream, RemoteWriter): the sink's Close halts it, then posts
// once more.
type interval struct {
	stop, done chan struct{}
}

// startInterval calls post every d until halt.
func startInterval(d time.Duration, post func()) *interval {
	iv := &interval{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(iv.done)
		t := time.NewTicker(d)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				post()
			case <-iv.stop:
				return
			}
		}
	}()
	return iv
}

// halt stops the posts, waiting for one under way.
func (iv *interval) halt() {
	close(iv.stop)
	<-iv.done
}

// flush posts what is pending; on failure it stays pending.
func (s *InfluxStream) flush(ctx context.Context) error {
	s.mu.Lock()
	batch := s.pending
	s.mu.Unlock()
	if len(batch) == 0 {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, s.o.Timeout)
	defer cancel()
	err := PostInflux(ctx, s.url, s.o.Token, batch)
	s.mu.Lock()
	defer s.mu.Unlock()
	if err != nil {
		s.lastErr = err
		s.failures++
		return err
	}
	s.sent += bytes.Count(batch, []byte{'\n'})
	// Lines added (or dropped) during the post: keep only what is newer
	// than the batch. Add only appends or cuts from the front, so the
	// batch is a prefix of pending unless lines were dropped meanwhile.
	if len(s.pending) >= len(batch) && bytes.Equal(s.pending[:len(batch)], batch) {
		s.pending = s.pending[len(batch):]
	}
	return nil
}

// Close stops the stream after one last post of what is pending, within
// ctx. The error says how many lines never reached the sink, and why.
func (s *InfluxStream) Close(ctx context.Context) error {
	s.posts.halt()
	err := s.flush(ctx)
	s.mu.Lock()
	defer s.mu.Unlock()
	lost := s.dropped
	if err != nil {
		lost += bytes.Count(s.pending, []byte{'\n'})
	}
	if lost == 0 {
		return nil
	}
	return fmt.Errorf("InfluxDB stream to %s: %d lines not delivered (%d failed posts; last: %v)", s.url, lost, s.failures, s.lastErr)
}

// Sent is the number of lines delivered so far.
func (s *InfluxStream) Sent() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sent
}
