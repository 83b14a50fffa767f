package report

import (
	"strings"
	"testing"
	"time"
)

func at(sec float64, done int) Snapshot {
	return Snapshot{
		Elapsed: time.Duration(sec * float64(time.Second)), Total: 2 * time.Minute, Done: done,
		InFlight: 32, ReqPerS: 7.94, OutTokPerS: 1013.6,
		TTFTP50: 123400 * time.Microsecond, TTFTP99: 1567 * time.Millisecond, Errors: 2,
	}
}

// TestProgressTTY: each update redraws one line in place; Done ends it.
func TestProgressTTY(t *testing.T) {
	t.Parallel()
	var out strings.Builder
	p := NewProgress(&out, true)
	p.Update(at(30, 240))
	p.Update(at(60, 480))
	p.Done()
	p.Done() // a second Done adds nothing
	want := "\r\x1b[K[=====               ]  25% 0:30 (1:30 left)  240 req  32 in flight  7.9 req/s  1014 tok/s  TTFT p50 123.4ms p99 1.57s  2 errors" +
		"\r\x1b[K[==========          ]  50% 1:00 (1:00 left)  480 req  32 in flight  7.9 req/s  1014 tok/s  TTFT p50 123.4ms p99 1.57s  2 errors" +
		"\n"
	if out.String() != want {
		t.Errorf("got  %q\nwant %q", out.String(), want)
	}
}

// TestProgressPlain: without a TTY, a plain line is printed at the first
// update and then only once 5 s of run time have passed since the last.
func TestProgressPlain(t *testing.T) {
	t.Parallel()
	var out strings.Builder
	p := NewProgress(&out, false)
	for _, sec := range []float64{0, 1, 4.9, 5, 7, 9.99, 10.5, 11} {
		p.Update(at(sec, int(sec*8)))
	}
	p.Done()
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	var clocks []string
	for _, l := range lines {
		if strings.ContainsAny(l, "\r\x1b") {
			t.Errorf("plain line has terminal control characters: %q", l)
		}
		clocks = append(clocks, strings.Fields(l)[0])
	}
	if got, want := strings.Join(clocks, " "), "0:00 0:05 0:10"; got != want {
		t.Errorf("printed at %s, want %s", got, want)
	}
}

// TestProgressLine pins the status text for the shapes a run can take.
func TestProgressLine(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		s    Snapshot
		want string
	}{{
		// Request-bounded run: the bar follows requests done, no time left shown.
		name: "request target",
		s:    Snapshot{Elapsed: 75 * time.Second, Done: 1500, Target: 2000, InFlight: 3},
		want: "[===============     ]  75% 1:15  1500/2000 req  3 in flight  0.0 req/s  0 tok/s  TTFT p50 - p99 -  0 errors",
	}, {
		// Both bounds: the bar shows whichever is further along.
		name: "both bounds",
		s:    Snapshot{Elapsed: 10 * time.Second, Total: 100 * time.Second, Done: 90, Target: 100},
		want: "[==================  ]  90% 0:10 (1:30 left)  90/100 req  0 in flight  0.0 req/s  0 tok/s  TTFT p50 - p99 -  0 errors",
	}, {
		// No bound known: no bar; warm-up is flagged; hours shown past 60 min.
		name: "unbounded warm-up",
		s:    Snapshot{Elapsed: 3723 * time.Second, Done: 5, Warmup: true, TTFTP50: 800 * time.Microsecond},
		want: "1:02:03  5 req  warm-up  0 in flight  0.0 req/s  0 tok/s  TTFT p50 0.800ms p99 -  0 errors",
	}, {
		// Overrun (grace period): the bar stops at 100% and nothing is left.
		name: "past the end",
		s:    Snapshot{Elapsed: 130 * time.Second, Total: 120 * time.Second},
		want: "[====================] 100% 2:10 (0:00 left)  0 req  0 in flight  0.0 req/s  0 tok/s  TTFT p50 - p99 -  0 errors",
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := bar(tt.s) + status(tt.s); got != tt.want {
				t.Errorf("got  %q\nwant %q", got, tt.want)
			}
		})
	}
}
