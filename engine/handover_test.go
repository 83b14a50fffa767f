package engine

import (
	"slices"
	"testing"
	"time"

	"github.com/inferload/inferload/record"
)

// TestClosedLoopHandover: a load change passes users from one phase to
// the next (Ends → After). Phase A runs 4 users for 250 ms of 100 ms
// requests, so every user is mid-request when A stops issuing, until
// 300 ms. Phase B starts at A's stop: the users it continues send their
// first request when their predecessor's is answered (300 ms), not at
// B's start and not after A drains; the users it adds start at its spawn
// rate, one at B's start and one 50 ms later; the users it retires
// finish their last request uncancelled.
func TestClosedLoopHandover(t *testing.T) {
	tests := []struct {
		name  string
		users int // B's users (A has 4)
		// wantFirst are B's first sends, one per user, in order, in ms
		// from A's start.
		wantFirst []time.Duration
	}{
		// 4 → 6: the 4 continue at 300 ms; 2 added at 20/s from 250 ms.
		{"add 2 at the spawn rate", 6, []time.Duration{250, 300, 300, 300, 300, 300}},
		// 4 → 2: 2 continue at 300 ms; 2 retire as they finish.
		{"retire 2 as they finish", 2, []time.Duration{300, 300}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			simulated(t, func(t *testing.T) {
				client := &serviceClient{service: 100 * time.Millisecond}
				ends := make([]chan struct{}, 4)
				for u := range ends {
					ends[u] = make(chan struct{})
				}
				a, aOut, aDone := started(t, Config{Client: client, Source: fixedSource{}, Render: render, Clock: TimerClock{},
					Shape: ClosedLoop{Users: 4, Ends: ends}, Duration: 250 * time.Millisecond})
				<-a.IssuingDone()
				after := make([]<-chan struct{}, min(tt.users, 4))
				for u := range after {
					after[u] = ends[u]
				}
				b, bOut, bDone := started(t, Config{Client: client, Source: fixedSource{}, Render: render, Clock: TimerClock{},
					Shape: ClosedLoop{Users: tt.users, After: after, SpawnRate: 20}, Duration: 200 * time.Millisecond})
				aRes, bRes := drain(aOut, aDone), drain(bOut, bDone)
				for _, r := range aRes {
					if r.Error != "" {
						t.Errorf("phase A request %d: %s, want every request of a retiring user answered", r.ID, r.Error)
					}
				}
				if len(aRes) != 12 {
					t.Errorf("phase A sent %d requests, want 12 (4 users × 3)", len(aRes))
				}
				shift := b.Started().Sub(a.Started())
				if shift != 250*time.Millisecond {
					t.Fatalf("phase B started %s after A, want at A's stop, 250ms", shift)
				}
				var sends []time.Duration
				for _, r := range bRes {
					sends = append(sends, shift+time.Duration(r.SendUS)*time.Microsecond)
				}
				slices.Sort(sends)
				for i, want := range tt.wantFirst {
					if i >= len(sends) || sends[i] != want*time.Millisecond {
						t.Errorf("B's sends %v: send %d want at %s", sends, i, want*time.Millisecond)
						break
					}
				}
				if got, want := client.peak.Load(), int64(max(tt.users, 4)); got > want {
					t.Errorf("peak in flight %d, want at most %d: the change must not start users on top of those still running", got, want)
				}
			})
		})
	}
}

func drain(out chan *record.Result, done chan struct{}) []*record.Result {
	var rs []*record.Result
	for r := range out {
		rs = append(rs, r)
	}
	<-done
	return rs
}

// TestShortPhaseHandsOverItsPredecessors: a phase that stops before the
// users it took over from have ended passes them on: phase A's 2 users
// are answered at 300 ms; phase B, from A's stop at 250 ms, lasts 20 ms
// and never sends; phase C, from B's stop, sends its first requests at
// 300 ms, when A's users end, never beside them.
func TestShortPhaseHandsOverItsPredecessors(t *testing.T) {
	simulated(t, func(t *testing.T) {
		client := &serviceClient{service: 100 * time.Millisecond}
		chans := func(n int) ([]chan struct{}, []<-chan struct{}) {
			ends, after := make([]chan struct{}, n), make([]<-chan struct{}, n)
			for u := range ends {
				ends[u] = make(chan struct{})
				after[u] = ends[u]
			}
			return ends, after
		}
		aEnds, aAfter := chans(2)
		bEnds, bAfter := chans(2)
		cfg := func(shape ClosedLoop, d time.Duration) Config {
			return Config{Client: client, Source: fixedSource{}, Render: render, Clock: TimerClock{}, Shape: shape, Duration: d}
		}
		a, aOut, aDone := started(t, cfg(ClosedLoop{Users: 2, Ends: aEnds}, 250*time.Millisecond))
		<-a.IssuingDone()
		b, bOut, bDone := started(t, cfg(ClosedLoop{Users: 2, After: aAfter, Ends: bEnds}, 20*time.Millisecond))
		<-b.IssuingDone()
		c, cOut, cDone := started(t, cfg(ClosedLoop{Users: 2, After: bAfter}, 100*time.Millisecond))
		drain(aOut, aDone)
		if n := len(drain(bOut, bDone)); n != 0 {
			t.Errorf("phase B sent %d requests, want none: its users' predecessors were still in flight", n)
		}
		for _, r := range drain(cOut, cDone) {
			if at := c.Started().Sub(a.Started()) + time.Duration(r.SendUS)*time.Microsecond; at < 300*time.Millisecond {
				t.Errorf("phase C sent at %s, want from 300ms, when A's users ended", at)
			}
		}
		if got := client.peak.Load(); got > 2 {
			t.Errorf("peak in flight %d, want at most 2", got)
		}
	})
}
