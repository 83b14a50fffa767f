package protocol

import (
	"bufio"
	"context"
	"io"
	"net"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/inferload/inferload/record"
)

// rawTCPTarget is a 127.0.0.1 server that is not an HTTP server: it reads
// what the client sends first, answers raw, half-closes and drains until
// the client goes (so the client sees the bytes and an end, not a reset).
func rawTCPTarget(t *testing.T, raw string) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				_ = c.SetDeadline(time.Now().Add(10 * time.Second))
				if _, err := bufio.NewReader(c).Peek(1); err != nil {
					return
				}
				_, _ = io.WriteString(c, raw)
				_ = c.(*net.TCPConn).CloseWrite()
				_, _ = io.Copy(io.Discard, c)
			}()
		}
	}()
	return "http://" + l.Addr().String() + "/v1"
}

// TestHTTPProtocolErrors: a reply that breaks HTTP itself is http_protocol,
// streamed or not, where it used to be http_5xx (a status of 600) or
// other (the rest): the server's bytes are wrong, not its answer.
func TestHTTPProtocolErrors(t *testing.T) {
	t.Parallel()
	const sse = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"
	for _, tc := range []struct {
		name string
		raw  string
		h2c  bool
		msg  string // a substring of the message; a|b: either
	}{
		// A status past 599 (counted as http_5xx before).
		{"status 600", "HTTP/1.1 600 Weird\r\nContent-Length: 0\r\n\r\n", false, "HTTP status 600 is outside 100-599"},
		// A status under 100.
		{"status 099", "HTTP/1.1 099 Weird\r\nContent-Length: 0\r\n\r\n", false, "HTTP status 99"},
		// Another protocol on the port: an SSH banner.
		{"not http", "SSH-2.0-OpenSSH_9.6\r\n", false, "malformed HTTP response"},
		// A status line that is not one.
		{"garbage status", "hello there\r\n\r\n", false, "malformed HTTP status code"},
		// A header line without a colon.
		{"bad header line", "HTTP/1.1 200 OK\r\nBad Header Line\r\n\r\n", false, "malformed MIME header"},
		// A chunk size that is not hex.
		{"bad chunk size", sse + "zz\r\nabc\r\n", false, "invalid byte in chunk length"},
		// A chunk longer than its size says.
		{"chunk overrun", sse + "5\r\ndata: xyz\r\n", false, "malformed chunked encoding"},
		// h2c by prior knowledge to an HTTP/1.1 server: its reply is no frame.
		{"h2c to http/1.1", "HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n", true, "frame too large|could not be established"},
		// h2c to a peer whose first frame is not SETTINGS.
		{"h2c bad first frame", "\x00\x00\x04\x99\x00\x00\x00\x00\x00abcd", true, "PROTOCOL_ERROR|could not be established"},
	} {
		for _, plain := range []bool{false, true} {
			name := tc.name + map[bool]string{false: " streamed", true: " plain"}[plain]
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				c := newClient(t, rawTCPTarget(t, tc.raw), func(o *OpenAIOptions) {
					if tc.h2c {
						o.HTTP2 = HTTP2Cleartext
					}
				})
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				defer cancel()
				var tr Trace
				c.Do(ctx, chatRequest(!plain), &tr)
				checkTrace(t, &tr)
				if tr.Err != record.ErrHTTPProtocol || !slices.ContainsFunc(strings.Split(tc.msg, "|"), func(m string) bool {
					return strings.Contains(tr.ErrMsg, m)
				}) {
					t.Errorf("got %q %q, want http_protocol with %q", tr.Err, tr.ErrMsg, tc.msg)
				}
			})
		}
	}
}
