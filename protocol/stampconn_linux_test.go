//go:build linux

package protocol

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"strings"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// lateRead is how late on purpose the client reads each event in
// TestStampedReadsLate: far more than any scheduling noise of a loaded
// two-core machine, so "stamped at arrival" and "stamped at the read"
// cannot be confused.
const lateRead = 40 * time.Millisecond

// stampSlack bounds how far a kernel stamp may lie outside the server's
// write on loopback (the segment is stamped while the write system call
// runs): wide enough for a preempted server goroutine, far below lateRead.
const stampSlack = 5 * time.Millisecond

// sentWindow is when the server handed one event to the kernel: the kernel
// stamp of its arrival must fall inside it.
type sentWindow struct{ before, after time.Time }

// steppedServer streams n SSE events in a chunked reply. It writes event i
// only when told to on next, and reports the instants around the write on
// sent, so the test knows when each event's bytes entered the network.
func steppedServer(t *testing.T, tlsOn bool, n int, next <-chan struct{}, sent chan<- sentWindow) *httptest.Server {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		for i := range n {
			select {
			case <-next:
			case <-r.Context().Done():
				return
			}
			before := time.Now()
			fmt.Fprintf(w, "data: {\"choices\":[{\"delta\":{\"content\":\"t%d\"}}]}\n\n", i)
			w.(http.Flusher).Flush()
			sent <- sentWindow{before, time.Now()}
		}
	})
	var srv *httptest.Server
	if tlsOn {
		srv = httptest.NewTLSServer(h)
	} else {
		srv = httptest.NewServer(h)
	}
	t.Cleanup(srv.Close)
	return srv
}

// stampedStream opens srv's stream through the client's own transport and
// returns an SSE reader on the kernel clock of the connection it used.
func stampedStream(t *testing.T, srv *httptest.Server) (*SSEReader, *stampConn) {
	t.Helper()
	body, sc := stampedBody(t, srv)
	sse := NewSSEReader(nil, time.Now)
	sse.resetStamped(body, sc)
	return sse, sc
}

// stampedBody opens srv's stream through the client's own transport and
// returns its body and the connection it used.
func stampedBody(t *testing.T, srv *httptest.Server) (io.Reader, *stampConn) {
	t.Helper()
	c := newClient(t, srv.URL, func(o *OpenAIOptions) { o.Insecure = true })
	if c.Clock() != ClockKernel {
		t.Fatalf("Clock() = %q on Linux, want %q", c.Clock(), ClockKernel)
	}
	var sc *stampConn
	ct := &httptrace.ClientTrace{GotConn: func(info httptrace.GotConnInfo) { sc = stampConnOf(info.Conn) }}
	req, err := http.NewRequestWithContext(httptrace.WithClientTrace(context.Background(), ct), http.MethodGet, srv.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := c.tr.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	if sc == nil {
		t.Fatal("the connection is not a stampConn")
	}
	return resp.Body, sc
}

// stampedNext reads the next event of a stamped stream, as SSE events or
// as NDJSON lines (the stepped server's "data: ..." lines serve as lines).
type stampedNext func() (data []byte, at time.Time, lag time.Duration, kernel bool, err error)

func stampedReader(t *testing.T, srv *httptest.Server, kind string) (stampedNext, *stampConn) {
	t.Helper()
	if kind == "sse" {
		sse, sc := stampedStream(t, srv)
		return func() ([]byte, time.Time, time.Duration, bool, error) {
			ev, err := sse.Next()
			return ev.Data, ev.At, ev.ReadLag, ev.Kernel, err
		}, sc
	}
	body, sc := stampedBody(t, srv)
	lr := NewLineReader(nil, time.Now)
	lr.resetStamped(body, sc)
	return func() ([]byte, time.Time, time.Duration, bool, error) {
		l, err := lr.Next()
		return l.Data, l.At, l.ReadLag, l.Kernel, err
	}, sc
}

// TestStampedReadsLate proves which read's stamp a body Read's bytes
// carry through net/http's bufio.Reader and chunked decoder (and TLS):
// the server sends each event at a known instant, the client reads it
// lateRead later on purpose, and the event must carry the instant of its
// arrival, its read lag at least lateRead, and the user-space clock would
// have been lateRead late.
func TestStampedReadsLate(t *testing.T) {
	if !stampable() {
		t.Fatal("this Linux refuses SO_TIMESTAMPING")
	}
	for _, kind := range []string{"sse", "ndjson"} {
		for _, tlsOn := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/tls=%v", kind, tlsOn), func(t *testing.T) {
				const n = 4
				next, sent := make(chan struct{}, 1), make(chan sentWindow, 1)
				read, sc := stampedReader(t, steppedServer(t, tlsOn, n, next, sent), kind)
				for i := range n {
					next <- struct{}{}
					w := <-sent
					// Late on purpose: the bytes are in the kernel by now.
					<-time.After(lateRead)
					data, at, lag, kernel, err := read()
					readAt := time.Now()
					if err != nil {
						t.Fatalf("event %d: %v", i, err)
					}
					if !strings.Contains(string(data), fmt.Sprintf("t%d", i)) {
						t.Fatalf("event %d: got %q", i, data)
					}
					if !kernel {
						t.Fatalf("event %d: not kernel-stamped (rx %d, now %d)", i, sc.rxNano(), time.Now().UnixNano())
					}
					if at.Before(w.before.Add(-stampSlack)) || at.After(w.after.Add(stampSlack)) {
						t.Errorf("event %d: stamped %v after the write began (write took %v), want within it ±%v",
							i, at.Sub(w.before), w.after.Sub(w.before), stampSlack)
					}
					if lag < lateRead-stampSlack {
						t.Errorf("event %d: read lag %v, want ≥ %v", i, lag, lateRead-stampSlack)
					}
					if user := readAt.Sub(at); user < lateRead {
						t.Errorf("event %d: read %v after its stamp, want ≥ %v", i, user, lateRead)
					}
				}
			})
		}
	}
}

// TestStampedBufferedEvents: two events the server sends in one write
// reach the client in one read; both carry that read's stamp, and the
// second, served from the reader's buffer without reading again, is not
// restamped later.
func TestStampedBufferedEvents(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "data: {\"a\":1}\n\ndata: {\"a\":2}\n\n")
	})
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	sse, _ := stampedStream(t, srv)
	first, err := sse.Next()
	if err != nil {
		t.Fatal(err)
	}
	at, lag := first.At, first.ReadLag
	<-time.After(lateRead) // late on purpose: a restamp would show it
	second, err := sse.Next()
	if err != nil {
		t.Fatal(err)
	}
	if !first.Kernel || !second.Kernel || !second.At.Equal(at) || second.ReadLag != lag {
		t.Errorf("first %v (lag %v), second %v (lag %v): want the same kernel stamp",
			at, lag, second.At, second.ReadLag)
	}
}

// TestStampConnErrors: the stamped read path reports what net.Conn's own
// would, so the fault taxonomy is unchanged: EOF at the peer's close, a
// reset as ECONNRESET, a deadline as a timeout.
func TestStampConnErrors(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	for _, tc := range []struct {
		name  string
		serve func(net.Conn) // what the server does to the connection
		check func(error) bool
	}{
		// A clean close: io.EOF, as net.Conn gives.
		{"close", func(c net.Conn) { c.Close() }, func(err error) bool { return err == io.EOF }},
		// SO_LINGER 0 makes Close send an RST: a reset.
		{"reset", func(c net.Conn) { c.(*net.TCPConn).SetLinger(0); c.Close() }, isReset},
		// The server says nothing: the read deadline ends the read.
		{"stall", func(net.Conn) {}, func(err error) bool {
			ne, ok := err.(net.Error)
			return ok && ne.Timeout()
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			accepted := make(chan net.Conn, 1)
			go func() {
				c, err := ln.Accept()
				if err == nil {
					accepted <- c
				}
			}()
			raw, err := net.Dial("tcp", ln.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			sc := newStampConn(raw)
			if sc == nil {
				t.Fatal("newStampConn refused a TCP connection")
			}
			defer sc.Close()
			srv := <-accepted
			defer srv.Close()
			tc.serve(srv)
			sc.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
			_, err = sc.Read(make([]byte, 16))
			if !tc.check(err) {
				t.Errorf("got %v (%T)", err, err)
			}
		})
	}
}

// BenchmarkStampedRead reads 64-byte messages over loopback through the
// stamped read path (recvmsg with its control message, the stamp kept):
// it must allocate nothing per read.
func BenchmarkStampedRead(b *testing.B) {
	for _, stamped := range []bool{false, true} {
		b.Run(fmt.Sprintf("kernel=%v", stamped), func(b *testing.B) {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				b.Fatal(err)
			}
			defer ln.Close()
			go func() {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				defer c.Close()
				msg := make([]byte, 64)
				for {
					if _, err := c.Write(msg); err != nil {
						return
					}
				}
			}()
			raw, err := net.Dial("tcp", ln.Addr().String())
			if err != nil {
				b.Fatal(err)
			}
			var conn net.Conn = raw
			if stamped {
				conn = newStampConn(raw)
			}
			defer conn.Close()
			buf := make([]byte, 64)
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				if _, err := io.ReadFull(conn, buf); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// FuzzRxStamp: whatever control data the kernel (or a bug) leaves, the
// parser never panics or reads past it, and finds a well-formed stamp.
func FuzzRxStamp(f *testing.F) {
	f.Fuzz(func(t *testing.T, oob []byte) {
		// recvmsg fills an aligned buffer; so does the test.
		words := make([]uint64, (len(oob)+7)/8+1)
		buf := unsafe.Slice((*byte)(unsafe.Pointer(&words[0])), len(words)*8)[:len(oob)]
		copy(buf, oob)
		ns := rxStamp(buf)
		if len(buf) >= unix.CmsgSpace(3*16) {
			h := (*unix.Cmsghdr)(unsafe.Pointer(&buf[0]))
			if h.Level == unix.SOL_SOCKET && h.Type == unix.SO_TIMESTAMPING && int(h.Len) == unix.CmsgLen(3*16) {
				ts := (*unix.Timespec)(unsafe.Pointer(&buf[unix.CmsgLen(0)]))
				if ns != ts.Nano() {
					t.Fatalf("stamp %d, want %d", ns, ts.Nano())
				}
			}
		}
	})
}

// TestRxStamp: the parser on control data whose stamp is known.
func TestRxStamp(t *testing.T) {
	good := stampCmsg(1_700_000_000, 123_456_789)
	for _, tc := range []struct {
		name string
		oob  []byte
		want int64
	}{
		// One SCM_TIMESTAMPING message: its first timespec.
		{"stamp", good, 1_700_000_000_123_456_789},
		// Nothing came (a read of 0 bytes).
		{"empty", nil, 0},
		// Cut short by MSG_CTRUNC.
		{"truncated", good[:20], 0},
		// Another message first, then the stamp.
		{"second", append(otherCmsg(), good...), 1_700_000_000_123_456_789},
		// A header whose length runs past the data.
		{"overlong", func() []byte { b := append([]byte(nil), good...); b[0] = 0xff; return b }(), 0},
	} {
		words := make([]uint64, len(tc.oob)/8+1)
		buf := unsafe.Slice((*byte)(unsafe.Pointer(&words[0])), len(words)*8)[:len(tc.oob)]
		copy(buf, tc.oob)
		if got := rxStamp(buf); got != tc.want {
			t.Errorf("%s: %d, want %d", tc.name, got, tc.want)
		}
	}
}

// stampCmsg builds the control message recvmsg gives with a stamp.
func stampCmsg(sec, nsec int64) []byte {
	b := make([]byte, unix.CmsgSpace(3*16))
	h := (*unix.Cmsghdr)(unsafe.Pointer(&b[0]))
	h.Level, h.Type = unix.SOL_SOCKET, unix.SO_TIMESTAMPING
	h.SetLen(unix.CmsgLen(3 * 16))
	ts := (*unix.Timespec)(unsafe.Pointer(&b[unix.CmsgLen(0)]))
	*ts = unix.NsecToTimespec(sec*1e9 + nsec)
	return b
}

// otherCmsg is a control message of another kind (4 bytes of data).
func otherCmsg() []byte {
	b := make([]byte, unix.CmsgSpace(4))
	h := (*unix.Cmsghdr)(unsafe.Pointer(&b[0]))
	h.Level, h.Type = unix.SOL_IP, unix.IP_TTL
	h.SetLen(unix.CmsgLen(4))
	return b
}
