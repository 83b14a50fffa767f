package record

import "math"

// SeriesLagS is how many seconds a window stays open after the newest
// completion seen has moved past it. Records usually arrive in completion
// order, but a slow consumer can reorder them by a little; a window is
// emitted only once it is this far in the past, so those still land in it.
const SeriesLagS = 5

// maxEmptyRunS bounds how many empty windows are emitted for one gap, so a
// record with an absurd timestamp cannot make Series write for hours.
const maxEmptyRunS = 3600

// windowDigits is the histogram precision per window: 1% is plenty for a
// per-second plot, and the histogram is a tenth of the full-precision size.
const windowDigits = 2

// Window is one second of the run clock, [TS, TS+1 s): one line of
// series.jsonl. A request belongs to the window in which it finished
// (Result.DoneUS: origin + E2E). Warm-up records are included (Warmup says
// how many) because a time series is where the warm-up is worth seeing.
type Window struct {
	// TS is the window's start in whole seconds since the run started.
	TS        int64 `json:"t_s"`
	Completed int64 `json:"completed"`
	Succeeded int64 `json:"succeeded"`
	Failed    int64 `json:"failed"`
	// ExpectedRejections are bad-input requests refused with a 4xx, as
	// they should be: neither successes nor failures.
	ExpectedRejections int64 `json:"expected_rejections,omitempty"`
	Warmup             int64 `json:"warmup"`
	// OutputTokens and InputTokens total the window's successful requests.
	OutputTokens int64 `json:"output_tokens"`
	InputTokens  int64 `json:"input_tokens"`
	// Latencies of the window's successful requests, in milliseconds
	// (0 when none): TTFT of streamed ones, E2E of all.
	TTFTP50MS float64 `json:"ttft_p50_ms"`
	TTFTP99MS float64 `json:"ttft_p99_ms"`
	E2EP99MS  float64 `json:"e2e_p99_ms"`
	// ReadLagP50MS and ReadLagP99MS are the read lag (Result.ReadLagUS)
	// of the window's kernel-stamped successes; absent without one.
	ReadLagP50MS float64 `json:"read_lag_p50_ms,omitempty"`
	ReadLagP99MS float64 `json:"read_lag_p99_ms,omitempty"`
}

// openWindow is a window still collecting records.
type openWindow struct {
	w         Window
	ttft, e2e *Hist
	readLag   *Hist
}

// Series cuts records into per-second windows and emits each window, in
// order, once no more records are expected for it. Memory is bounded by the
// windows open at once (about SeriesLagS of them). Not safe for concurrent
// use: the caller serialises Add and Flush.
type Series struct {
	emit      func(Window)
	open      map[int64]*openWindow
	free      []*openWindow // recycled windows: their histograms are reused
	next      int64         // the first window not yet emitted
	newest    int64         // the highest window index seen
	started   bool
	straggled int64
}

// NewSeries returns a series that calls emit for each finished window.
func NewSeries(emit func(Window)) *Series {
	return &Series{emit: emit, open: make(map[int64]*openWindow)}
}

// SecondOf is the one-second window of the run clock a record belongs
// to: the one it finished in (Result.DoneUS), a negative time counting
// in second 0. Every per-second view (series.jsonl, the live page) cuts
// by it, and a record whose window was already closed is a straggler
// counted in no window, in each of them.
func SecondOf(r *Result) int64 { return max(r.DoneUS(), 0) / 1e6 }

// Add puts r in the window it finished in, then emits every window more
// than SeriesLagS seconds older than the newest completion seen.
func (s *Series) Add(r *Result) {
	sec := SecondOf(r)
	if sec < s.next {
		s.straggled++ // its window is already written
		return
	}
	s.window(sec).add(r)
	if !s.started || sec > s.newest {
		s.newest, s.started = sec, true
	}
	s.emitUpTo(s.newest - SeriesLagS)
}

// Flush emits every open window (and the empty seconds between them). Call
// it once the run is over.
func (s *Series) Flush() {
	if s.started {
		s.emitUpTo(s.newest + 1)
	}
}

// Stragglers counts records that finished in a window already emitted; they
// are in records.jsonl and the summary but in no window.
func (s *Series) Stragglers() int64 { return s.straggled }

func (s *Series) window(sec int64) *openWindow {
	if ow, ok := s.open[sec]; ok {
		return ow
	}
	var ow *openWindow
	if n := len(s.free); n > 0 {
		ow, s.free = s.free[n-1], s.free[:n-1]
	} else {
		ow = &openWindow{ttft: newHist(windowDigits), e2e: newHist(windowDigits), readLag: newHist(windowDigits)}
	}
	ow.w = Window{TS: sec}
	s.open[sec] = ow
	return ow
}

// emitUpTo emits windows next … end−1, empty ones included so a stall shows
// as zeros, except that a gap longer than maxEmptyRunS is skipped.
func (s *Series) emitUpTo(end int64) {
	for s.next < end {
		if ow, ok := s.open[s.next]; ok {
			s.emit(ow.finish())
			delete(s.open, s.next)
			ow.ttft.Reset()
			ow.e2e.Reset()
			ow.readLag.Reset()
			s.free = append(s.free, ow)
			s.next++
			continue
		}
		first := s.firstOpen()
		if first != math.MaxInt64 && first-s.next > maxEmptyRunS {
			s.next = first
			continue
		}
		for gapEnd := min(first, end); s.next < gapEnd; s.next++ {
			s.emit(Window{TS: s.next})
		}
	}
}

// firstOpen is the oldest open window, or MaxInt64 when none is open. Open
// windows are never older than next, and there are only a few of them.
func (s *Series) firstOpen() int64 {
	first := int64(math.MaxInt64)
	for sec := range s.open {
		first = min(first, sec)
	}
	return first
}

func (ow *openWindow) add(r *Result) {
	w := &ow.w
	w.Completed++
	if r.Warmup {
		w.Warmup++
	}
	if r.ExpectedRejection() {
		w.ExpectedRejections++
		return
	}
	if !r.OK() {
		w.Failed++
		return
	}
	w.Succeeded++
	w.OutputTokens += int64(r.OutputTokens)
	w.InputTokens += int64(inputTokens(r))
	ow.e2e.Record(r.E2EUS)
	if ttft, ok := TTFTUS(r); ok {
		ow.ttft.Record(ttft)
	}
	if r.Clock == ClockKernel {
		ow.readLag.Record(r.ReadLagUS)
	}
}

func (ow *openWindow) finish() Window {
	w := ow.w
	w.TTFTP50MS = usToMS(ow.ttft.QuantileUS(0.50))
	w.TTFTP99MS = usToMS(ow.ttft.QuantileUS(0.99))
	w.E2EP99MS = usToMS(ow.e2e.QuantileUS(0.99))
	if ow.readLag.Count() > 0 {
		w.ReadLagP50MS = usToMS(ow.readLag.QuantileUS(0.50))
		w.ReadLagP99MS = usToMS(ow.readLag.QuantileUS(0.99))
	}
	return w
}
