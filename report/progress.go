package report

import (
	"fmt"
	"io"
	"strings"
	"time"
)

// plainEvery is the least time (of the run's elapsed time) between two
// plain progress lines, so CI logs stay readable.
const plainEvery = 5 * time.Second

const barWidth = 20

// Snapshot is the state of a running test, as the progress line shows it.
type Snapshot struct {
	// Elapsed is the run time so far; Total the planned duration (0 if the
	// run is bounded by request count only).
	Elapsed, Total time.Duration
	// Done is the number of finished requests; Target the planned count (0
	// if the run is bounded by duration only).
	Done, Target int
	InFlight     int
	ReqPerS      float64
	OutTokPerS   float64
	// TTFTP50 and TTFTP99 are over the measured requests so far.
	TTFTP50, TTFTP99 time.Duration
	Errors           int
	// Warmup is true while the warm-up runs.
	Warmup bool
}

// Progress prints a live progress line. On a terminal it redraws one line
// in place with a bar; otherwise it prints a plain line at most every 5 s
// of elapsed time. It starts no goroutine: the caller calls Update on its
// own tick and Done at the end. Not safe for concurrent use.
type Progress struct {
	w       io.Writer
	tty     bool
	drawn   bool          // a TTY line is on screen and not yet ended
	printed bool          // a plain line has been printed
	last    time.Duration // Elapsed of the last plain line
}

// NewProgress returns a progress printer writing to w; tty selects the
// in-place redrawn line.
func NewProgress(w io.Writer, tty bool) *Progress {
	return &Progress{w: w, tty: tty}
}

// Update shows s. Write errors are ignored: progress is best effort and
// must never stop a run.
func (p *Progress) Update(s Snapshot) {
	if p.tty {
		// \r returns to the line start; ESC[K clears what a longer previous
		// line left behind.
		fmt.Fprintf(p.w, "\r\x1b[K%s%s", bar(s), status(s))
		p.drawn = true
		return
	}
	if p.printed && s.Elapsed-p.last < plainEvery {
		return
	}
	p.printed, p.last = true, s.Elapsed
	fmt.Fprintf(p.w, "%s\n", status(s))
}

// Done ends the progress line so the next output starts on a fresh line.
func (p *Progress) Done() {
	if p.drawn {
		fmt.Fprint(p.w, "\n")
		p.drawn = false
	}
}

// fraction is how far the run is: the larger of time and request progress,
// since the run stops at whichever bound it reaches first. −1 if neither
// bound is known.
func fraction(s Snapshot) float64 {
	f := -1.0
	if s.Total > 0 {
		f = float64(s.Elapsed) / float64(s.Total)
	}
	if s.Target > 0 {
		f = max(f, float64(s.Done)/float64(s.Target))
	}
	if f < 0 {
		return f
	}
	return min(f, 1)
}

func bar(s Snapshot) string {
	f := fraction(s)
	if f < 0 {
		return ""
	}
	full := int(f * barWidth)
	return fmt.Sprintf("[%s%s] %3.0f%% ", strings.Repeat("=", full), strings.Repeat(" ", barWidth-full), 100*f)
}

func status(s Snapshot) string {
	var b strings.Builder
	b.WriteString(clock(s.Elapsed))
	if s.Total > 0 {
		fmt.Fprintf(&b, " (%s left)", clock(max(s.Total-s.Elapsed, 0)))
	}
	if s.Target > 0 {
		fmt.Fprintf(&b, "  %d/%d req", s.Done, s.Target)
	} else {
		fmt.Fprintf(&b, "  %d req", s.Done)
	}
	if s.Warmup {
		b.WriteString("  warm-up")
	}
	fmt.Fprintf(&b, "  %d in flight  %.1f req/s  %.0f tok/s  TTFT p50 %s p99 %s  %d errors",
		s.InFlight, s.ReqPerS, s.OutTokPerS, shortDuration(s.TTFTP50), shortDuration(s.TTFTP99), s.Errors)
	return b.String()
}

// clock formats a duration as m:ss, or h:mm:ss from an hour.
func clock(d time.Duration) string {
	sec := int64(d / time.Second)
	if sec >= 3600 {
		return fmt.Sprintf("%d:%02d:%02d", sec/3600, sec/60%60, sec%60)
	}
	return fmt.Sprintf("%d:%02d", sec/60, sec%60)
}

// shortDuration shows a latency compactly: "-" before any, then ms or s.
func shortDuration(d time.Duration) string {
	switch {
	case d <= 0:
		return "-"
	case d < time.Second:
		return formatMS(float64(d)/float64(time.Millisecond)) + "ms"
	default:
		return fmt.Sprintf("%.2fs", d.Seconds())
	}
}
