package distributed

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// TestNotUpYet: what waiting may fix is retried, what it will not is not.
func TestNotUpYet(t *testing.T) {
	t.Parallel()
	refused := &url.Error{Op: "Get", URL: "http://c:8089/v1/clock", Err: &net.OpError{Op: "dial", Net: "tcp",
		Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}}
	tests := []struct {
		name string
		err  error
		want bool
	}{
		// Nothing listens yet: the collector's process is not running.
		{"refused", fmt.Errorf("collector x: %w", refused), true},
		// The Service's DNS record is not there yet.
		{"no such host", &url.Error{Op: "Get", Err: &net.OpError{Op: "dial", Err: &net.DNSError{Err: "no such host", Name: "c", IsNotFound: true}}}, true},
		// The cluster's resolver is slow to answer.
		{"dns timeout", &net.DNSError{Err: "i/o timeout", Name: "c", IsTimeout: true}, true},
		// A dial that timed out (a Service without endpoints under IPVS)
		// or found no route (a pod address not routed yet).
		{"dial timeout", &url.Error{Op: "Get", Err: &net.OpError{Op: "dial", Net: "tcp", Err: os.ErrDeadlineExceeded}}, true},
		{"no route", &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.EHOSTUNREACH)}, true},
		// A call that timed out once connected: the collector is there.
		{"call timeout", &url.Error{Op: "Get", Err: errors.New("context deadline exceeded (Client.Timeout exceeded while awaiting headers)")}, false},
		// A gateway in front of a collector not ready yet.
		{"503", fmt.Errorf("collector x: %w", &StatusError{What: "clock", Code: 503, Status: "503 Service Unavailable"}), true},
		// The token is wrong: waiting will not fix it.
		{"401", fmt.Errorf("collector x: %w", &StatusError{What: "clock", Code: 401, Status: "401 Unauthorized"}), false},
		// A collector for fewer segments: no amount of waiting fixes it.
		{"400", &StatusError{What: "ready", Code: 400, Status: "400 Bad Request"}, false},
		// A connection cut mid-answer is not "not up yet".
		{"reset", &net.OpError{Op: "read", Err: os.NewSyscallError("read", syscall.ECONNRESET)}, false},
		{"other", errors.New("clock: no time in the answer"), false},
	}
	for _, tt := range tests {
		if got := NotUpYet(tt.err); got != tt.want {
			t.Errorf("%s: NotUpYet(%v) = %v, want %v", tt.name, tt.err, got, tt.want)
		}
	}
}

// closedPort is a loopback URL nothing listens on (the port was free a
// moment ago and is closed now: a connection is refused).
func closedPort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return "http://" + addr
}

// TestReachGivesUpAtTheDeadline: a collector that never comes ends the
// wait at the deadline with an error naming its URL, how long the segment
// waited and what the last try met; a refusal waiting will not fix (401)
// ends it at once, after one try.
func TestReachGivesUpAtTheDeadline(t *testing.T) {
	t.Parallel()
	u := closedPort(t)
	ctx, cancel := context.WithTimeout(context.Background(), 700*time.Millisecond)
	defer cancel()
	var tries, heard atomic.Int32
	client := &http.Client{Timeout: time.Second}
	err := Reach(ctx, u, 700*time.Millisecond, func(ctx context.Context) error {
		tries.Add(1)
		_, err := MeasureClock(ctx, client, u, time.Now)
		return err
	}, func(error) { heard.Add(1) })
	if !errors.Is(err, ErrStartTimeout) || !strings.Contains(err.Error(), u) || !strings.Contains(err.Error(), "refused") ||
		!strings.Contains(err.Error(), "did not answer in 700ms") {
		t.Errorf("err = %v; want the give-up naming %s, the 700ms waited and the refusal", err, u)
	}
	// 0, 100, 300 ms (then 700 ms: the deadline): backing off, not spinning.
	if n := tries.Load(); n < 2 || n > 5 || heard.Load() != 1 {
		t.Errorf("%d tries, %d waiting notes; want a few tries backing off and one note", n, heard.Load())
	}

	_, srv := serveCollector(t, CollectorConfig{Segments: 1, Now: time.Now, Token: "right"})
	tries.Store(0)
	wrong := WithToken(client, "wrong")
	err = Reach(context.Background(), srv.URL, 0, func(ctx context.Context) error {
		tries.Add(1)
		_, err := MeasureClock(ctx, wrong, srv.URL, time.Now)
		return err
	}, nil)
	if err == nil || errors.Is(err, ErrStartTimeout) || !strings.Contains(err.Error(), "401") || tries.Load() != 1 {
		t.Errorf("a wrong token: %v after %d tries; want the 401 at once", err, tries.Load())
	}
}

// TestReachWaitsOutA503: a gateway that answers 503 until the collector
// behind it is ready is waited out; the clock is then measured.
func TestReachWaitsOutA503(t *testing.T) {
	t.Parallel()
	c, err := NewCollector(CollectorConfig{Segments: 1, Dir: t.TempDir(), Now: time.Now})
	if err != nil {
		t.Fatal(err)
	}
	var calls atomic.Int32
	gateway := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) <= 3 {
			http.Error(w, "no healthy upstream", http.StatusServiceUnavailable)
			return
		}
		c.Handler().ServeHTTP(w, r)
	}))
	defer gateway.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var offset ClockOffset
	err = Reach(ctx, gateway.URL, 30*time.Second, func(ctx context.Context) (err error) {
		offset, err = MeasureClock(ctx, gateway.Client(), gateway.URL, time.Now)
		return err
	}, nil)
	if err != nil || offset.RTT <= 0 {
		t.Errorf("Reach through a gateway answering 503 three times: %v, %+v; want the clock measured", err, offset)
	}
}
