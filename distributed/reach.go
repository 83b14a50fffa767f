package distributed

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"syscall"
	"time"
)

// Backoff between a segment's tries to reach a collector that is not up
// yet: the first retry soon (a collector process starting beside it), then
// doubling to a few seconds (a pod waiting for its volume and image, which
// takes minutes: a few hundred cheap tries at most).
const (
	firstRetry = 100 * time.Millisecond
	maxRetry   = 2 * time.Second
)

// DialTimeout bounds one attempt to connect to the collector, shorter than
// a call's own timeout so that a dial that hangs (a Service without
// endpoints under IPVS drops the packets) fails as a dial, which Reach
// waits out, rather than as a call that timed out, which it does not.
const DialTimeout = 5 * time.Second

// SegmentTransport is the transport of a segment's calls to the collector,
// dialling with DialTimeout.
func SegmentTransport() http.RoundTripper {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.DialContext = (&net.Dialer{Timeout: DialTimeout, KeepAlive: 30 * time.Second}).DialContext
	return t
}

// StatusError is the collector's answer when it was not the one asked
// for: the HTTP status and the first of its body.
type StatusError struct {
	// What names the call ("clock", "ready").
	What string
	// Code is the HTTP status code; Status its line ("503 Service Unavailable").
	Code   int
	Status string
	// Message is the start of the answer's body.
	Message string
}

func (e *StatusError) Error() string {
	return fmt.Sprintf("%s: %s: %s", e.What, e.Status, e.Message)
}

// NotUpYet reports whether err says the collector is not up yet, which
// waiting may fix, rather than that it refuses the segment:
//
//   - the connection not made: refused (nothing listens yet; a
//     Kubernetes Service without a ready endpoint refuses too, with
//     kube-proxy's iptables), or the dial timed out or found no route (a
//     Service without endpoints under IPVS, a pod address not routed
//     yet) — any failure to dial;
//   - the host name not resolvable yet: a Service's DNS record appears
//     once the Service exists, and a cluster's resolver may not have it;
//   - 503 Service Unavailable: a proxy or gateway in front of a collector
//     that is not ready.
//
// Anything else (a 401 for the token, a 400, a reset mid-answer) is not
// waited on: a segment says why at once.
func NotUpYet(err error) bool {
	if st, ok := errors.AsType[*StatusError](err); ok {
		return st.Code == http.StatusServiceUnavailable
	}
	if errors.Is(err, syscall.ECONNREFUSED) {
		return true
	}
	if op, ok := errors.AsType[*net.OpError](err); ok && op.Op == "dial" {
		if _, isDNS := errors.AsType[*net.DNSError](err); !isDNS {
			return true
		}
	}
	if dns, ok := errors.AsType[*net.DNSError](err); ok {
		return dns.IsNotFound || dns.IsTemporary || dns.IsTimeout
	}
	return false
}

// Reach calls try until it succeeds or fails in a way NotUpYet says
// waiting will not fix, backing off between tries, for as long as ctx
// allows. waiting (nil: nothing) hears the first failure that is waited
// on, so the segment's log says what it waits for. Once ctx's deadline
// passes, the error names the collector, the wait allowed (allowed: the
// timeout the caller gave ctx; the library reads no clock) and the last
// failure.
func Reach(ctx context.Context, url string, allowed time.Duration, try func(context.Context) error, waiting func(error)) error {
	delay := firstRetry
	var last error
	for {
		err := try(ctx)
		if ctx.Err() != nil {
			return waitedOut(ctx, url, allowed, cmpErr(last, err))
		}
		if err == nil || !NotUpYet(err) {
			return err
		}
		if last == nil && waiting != nil {
			waiting(err)
		}
		last = err
		t := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()
			return waitedOut(ctx, url, allowed, last)
		case <-t.C:
		}
		delay = min(2*delay, maxRetry)
	}
}

// cmpErr is a, or b when a is nil.
func cmpErr(a, b error) error {
	if a != nil {
		return a
	}
	return b
}

// ErrStartTimeout marks a segment that gave up waiting for its start.
var ErrStartTimeout = errors.New("gave up waiting for the collector")

// waitedOut is Reach's error once ctx is done: a deadline names the wait;
// a cancel (Ctrl-C) is just that.
func waitedOut(ctx context.Context, url string, allowed time.Duration, last error) error {
	if !errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return ctx.Err()
	}
	return fmt.Errorf("collector %s did not answer in %s (%w; last try: %v): is it running, and is the URL the one it serves?",
		url, allowed.Round(100*time.Millisecond), ErrStartTimeout, last)
}
