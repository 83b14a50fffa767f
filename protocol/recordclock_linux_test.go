//go:build linux

package protocol

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// fakeStampedBody plays a kernel-stamped connection: each Read returns the
// next piece and sets the connection's receive stamp as the kernel would
// have, lagBefore(piece) before now; a piece with stale set leaves the
// stamp at an instant before the request was sent, as a read that
// carried none leaves the previous reply's stamp.
type fakeStampedBody struct {
	sc     *stampConn
	sent   time.Time
	pieces []string
	stale  map[int]bool
	i      int
}

func (b *fakeStampedBody) Read(p []byte) (int, error) {
	if b.i == len(b.pieces) {
		return 0, io.EOF
	}
	now := time.Now()
	if b.stale[b.i] {
		b.sc.rx.Store(b.sent.Add(-4 * time.Millisecond).UnixNano())
	} else {
		b.sc.rx.Store(now.Add(-100 * time.Microsecond).UnixNano())
	}
	n := copy(p, b.pieces[b.i])
	b.i++
	return n, nil
}

// TestRecordClockStaleDone is the negative E2E of issue 33: tokens with
// fresh kernel stamps and a [DONE] whose read kept a stale one (from
// before the send). The record must be wholly on the user-space clock,
// its end at or after its send and its last token; before, the end took
// the stale stamp and E2E came out about −4 ms with a positive TTFT.
func TestRecordClockStaleDone(t *testing.T) {
	c, err := NewOpenAI(OpenAIOptions{BaseURL: "http://127.0.0.1:1/v1", Model: "m"})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		stale map[int]bool
		clock string
	}{
		// Every read stamped after the send: the kernel clock throughout.
		{"all fresh", nil, ClockKernel},
		// The [DONE] read kept the previous reply's stamp.
		{"stale done", map[int]bool{2: true}, ClockUser},
		// The first token's read did: so does the whole record.
		{"stale first", map[int]bool{0: true}, ClockUser},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithCancelCause(context.Background())
			defer cancel(nil)
			sent := time.Now().Add(-20 * time.Millisecond)
			tr := &Trace{Sent: sent}
			cl := &call{c: c, parent: ctx, ctx: ctx, cancel: cancel, req: &Request{}, t: tr, sc: &stampConn{}}
			body := &fakeStampedBody{sc: cl.sc, sent: sent, stale: tc.stale, pieces: []string{
				"data: {\"choices\":[{\"delta\":{\"content\":\"a\"}}]}\n\n",
				"data: {\"choices\":[{\"delta\":{\"content\":\"b\"}}]}\n\n",
				"data: [DONE]\n\n",
			}}
			resp := &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"text/event-stream"}}, Body: io.NopCloser(body)}
			if err := cl.readStream(resp); err != nil {
				t.Fatal(err)
			}
			cl.clock.settle(tr)
			ttft, e2e := tr.FirstToken.Sub(sent), tr.End.Sub(sent)
			if tr.Clock != tc.clock || ttft < 0 || e2e < ttft || len(tr.EventsUS) != 2 {
				t.Fatalf("clock %q ttft %v e2e %v events %v, want clock %q and 0 ≤ ttft ≤ e2e",
					tr.Clock, ttft, e2e, tr.EventsUS, tc.clock)
			}
			last := tr.EventsUS[1]
			if tr.EventsUS[0] < 0 || last < tr.EventsUS[0] || e2e.Microseconds() < last {
				t.Fatalf("events %v µs, e2e %v: offsets out of order", tr.EventsUS, e2e)
			}
			if strings.Contains(tc.name, "fresh") && tr.ReadLag <= 0 {
				t.Errorf("kernel record with read lag %v", tr.ReadLag)
			}
		})
	}
}
