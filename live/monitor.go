package live

import (
	"errors"
	"sort"
	"sync"
	"time"

	"github.com/inferload/inferload/record"
)

// Monitor is the live view of a running test that the UI shows: one
// Point per second of the run clock over a bounded window, the errors
// of each kind with their latest messages, and per-class and
// per-input-bucket tables. Like the progress line it is a view, not the
// summary: summary.json is assembled from the run directory at the end.
// The tables use record.Aggregate (the summary's own definitions) over
// the records seen so far, warm-up excluded as the summary excludes it.
//
// Observe is called once per finished request on the run's collector;
// Tick once a second closes the seconds no more records are expected
// for. Memory is bounded: Window points, a few open seconds, one
// aggregate, maxMessages messages per error kind and maxEvents events.
type Monitor struct {
	mu     sync.Mutex
	now    func() time.Time
	window int

	start  time.Time // the run clock's zero; zero until Start
	dir    string
	total  time.Duration
	open   map[int64]*second
	free   []*second // closed seconds, their histograms reset for reuse
	next   int64     // the first second not yet closed
	points []Point   // the last window points, oldest first
	seq    int64     // points closed so far (the next point's number)
	agg    *record.Aggregate
	errs   map[string]*errorKind
	events []Event
	tel    []TelemetryPoint // the last telemetry samples, oldest first
	telSeq int64            // samples kept so far
	final  *Final
	// end is when Finish was called: the run's elapsed time stops there.
	end     time.Time
	inFl    func() int
	level   func() float64
	done    int64
	failed  int64
	outToks int64
	// straggled counts records whose second was closed before they came.
	straggled int64
}

// MonitorOptions configure a Monitor; the zero value is the default.
type MonitorOptions struct {
	// Window is how many one-second points the monitor keeps and the
	// page draws (default 3600: an hour; a 24-hour run stays light, the
	// run directory keeps every second).
	Window int
	// Rules are the plan's (plan.Plan.Rules, as summary.json's aggregate
	// takes them): input buckets, conversations, SLOs and model size, so
	// the page's tables, sessions and goodput read as summary.json's.
	// The zero value: default buckets, no sessions, nothing judged.
	Rules record.Rules
	// Now is the clock (default time.Now).
	Now func() time.Time
}

// Point is one second of the run as the page draws it. Latencies are
// in milliseconds over the second's successful requests, 0 when none.
type Point struct {
	T         int64      `json:"t"` // seconds since the run started
	Completed int64      `json:"completed"`
	Failed    int64      `json:"failed"`
	OutTokens int64      `json:"out_tokens"`
	TTFT      [3]float64 `json:"ttft"` // P50, P90, P99
	ITL       [3]float64 `json:"itl"`
	TPOT      [3]float64 `json:"tpot"`
	E2E       [3]float64 `json:"e2e"`
	InFlight  int        `json:"in_flight"`
	// Level is the users or requests/s set when the second's first
	// record came (for an empty second: when it closed).
	Level float64 `json:"level"`
}

// Event is a mark on the page's time charts: a note, a load change, a
// stop.
type Event struct {
	T       float64 `json:"t"` // seconds since the run started
	Kind    string  `json:"kind"`
	Message string  `json:"message"`
}

// ErrorKind is one error kind's count and its latest messages, newest
// last.
type ErrorKind struct {
	Kind   string   `json:"kind"`
	Count  int64    `json:"count"`
	Latest []string `json:"latest"`
}

// Final is what the page shows once the run is over: the summary's own
// headline figures, passed in by the caller after Assemble.
type Final struct {
	Dir     string          `json:"dir"`
	Summary *record.Summary `json:"summary"`
	// ReportURL, when set, links the page to the run's report.html.
	ReportURL string `json:"report_url,omitempty"`
	// Error is why the run failed, when it did.
	Error string `json:"error,omitempty"`
}

type errorKind struct {
	count  int64
	latest []string
}

// second is one open second's counts and histograms.
type second struct {
	p                   Point
	ttft, itl, tpot, e2 *record.Hist
}

const (
	defaultWindow = 3600
	maxMessages   = 5
	maxEvents     = 500
	maxMessageLen = 300
	// closeLagS: a second is closed once the run clock is this many
	// seconds past its end, so records finishing in it have arrived.
	closeLagS = 1
)

// NewMonitor returns an empty monitor.
func NewMonitor(o MonitorOptions) *Monitor {
	m := &Monitor{now: o.Now, window: o.Window, open: map[int64]*second{}, errs: map[string]*errorKind{},
		agg: record.NewAggregate()}
	if m.now == nil {
		m.now = time.Now
	}
	if m.window <= 0 {
		m.window = defaultWindow
	}
	m.setRules(o)
	return m
}

// setRules hands the aggregate o's rules.
func (m *Monitor) setRules(o MonitorOptions) { m.agg.SetRules(o.Rules) }

// ErrObservedAlready: Configure came after the monitor's first record.
var ErrObservedAlready = errors.New("live: the monitor has observed records already: its tables keep the rules they were made with")

// Configure sets o's plan rules (Rules; its Window and Now stay as made)
// on a monitor made before the plan was known: the collector's, whose page is up before any segment has sent
// its plan. The aggregate takes its rules before its first record (a
// record judged by no SLO stays judged so), so once one is observed
// Configure changes nothing and returns ErrObservedAlready.
func (m *Monitor) Configure(o MonitorOptions) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.done > 0 {
		return ErrObservedAlready
	}
	m.setRules(o)
	return nil
}

// Start sets the run clock's zero (the run's start), its directory and
// planned duration (0 when the run ends on a request count).
func (m *Monitor) Start(dir string, total time.Duration) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.start, m.dir, m.total = m.now(), dir, total
}

// StartAt is Start with the run clock's zero given rather than now: a
// distributed run's common start, which its collector sets. Calling it
// again updates the directory and duration.
func (m *Monitor) StartAt(at time.Time, dir string, total time.Duration) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.start, m.dir, m.total = at, dir, total
}

// Gauges tells the monitor how to read the requests in flight and the
// load level set now (either may be nil).
func (m *Monitor) Gauges(inFlight func() int, level func() float64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.inFl, m.level = inFlight, level
}

// Observe folds one finished request in. Safe for concurrent use.
func (m *Monitor) Observe(r *record.Result) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.agg.Add(r)
	m.done++
	failed := !r.OK() && !r.ExpectedRejection()
	if failed {
		m.failed++
		m.addError(r)
	}
	if r.OK() {
		m.outToks += int64(r.OutputTokens)
	}
	sec := record.SecondOf(r)
	if sec < m.next {
		m.straggled++ // its second is already drawn, as in series.jsonl
		return
	}
	s := m.second(sec)
	s.p.Completed++
	if failed {
		s.p.Failed++
	}
	if !r.OK() {
		return
	}
	s.p.OutTokens += int64(r.OutputTokens)
	s.e2.Record(r.E2EUS)
	ttft, ok := record.TTFTUS(r)
	if !ok {
		return
	}
	s.ttft.Record(ttft)
	if tpot, ok := record.TPOTUS(r); ok {
		s.tpot.Record(tpot)
	}
	r.EachGap(s.itl.RecordN)
}

// second is the open second sec (not yet closed: sec ≥ next).
func (m *Monitor) second(sec int64) *second {
	s := m.open[sec]
	if s == nil {
		if n := len(m.free); n > 0 {
			s, m.free = m.free[n-1], m.free[:n-1]
			s.p = Point{T: sec}
		} else {
			s = &second{p: Point{T: sec}, ttft: record.NewHist(), itl: record.NewHist(), tpot: record.NewHist(), e2: record.NewHist()}
		}
		if m.level != nil { // the load when the second's first record came
			s.p.Level = m.level()
		}
		m.open[sec] = s
	}
	return s
}

func (m *Monitor) addError(r *record.Result) {
	kind := string(r.Error)
	if kind == "" {
		kind = outcomeUnknownError
	}
	e := m.errs[kind]
	if e == nil {
		e = &errorKind{}
		m.errs[kind] = e
	}
	e.count++
	msg := r.ErrorMsg
	if msg == "" {
		return
	}
	if len(msg) > maxMessageLen {
		msg = msg[:maxMessageLen] + "…"
	}
	if len(e.latest) == maxMessages {
		e.latest = append(e.latest[:0], e.latest[1:]...)
	}
	e.latest = append(e.latest, msg)
}

// Tick closes every second that ended more than closeLagS ago, empty
// ones included, so the charts' time axis has no holes.
func (m *Monitor) Tick() {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.start.IsZero() {
		return
	}
	m.closeUpTo(int64(m.now().Sub(m.start)/time.Second) - closeLagS)
}

// closeUpTo closes the seconds before end.
func (m *Monitor) closeUpTo(end int64) {
	for ; m.next < end; m.next++ {
		p := Point{T: m.next, Level: -1}
		if s := m.open[m.next]; s != nil {
			p = s.p
			p.TTFT, p.ITL, p.TPOT, p.E2E = quantiles(s.ttft), quantiles(s.itl), quantiles(s.tpot), quantiles(s.e2)
			delete(m.open, m.next)
			for _, h := range []*record.Hist{s.ttft, s.itl, s.tpot, s.e2} {
				h.Reset()
			}
			m.free = append(m.free, s)
		}
		if m.inFl != nil {
			p.InFlight = m.inFl()
		}
		if p.Level < 0 { // an empty second: the load now
			p.Level = 0
			if m.level != nil {
				p.Level = m.level()
			}
		}
		if len(m.points) == m.window {
			m.points = append(m.points[:0], m.points[1:]...)
		}
		m.points = append(m.points, p)
		m.seq++
	}
}

func quantiles(h *record.Hist) [3]float64 {
	if h.Count() == 0 {
		return [3]float64{}
	}
	ms := func(q float64) float64 { return float64(h.QuantileUS(q)) / 1e3 }
	return [3]float64{ms(0.50), ms(0.90), ms(0.99)}
}

// Mark adds an event to the page's charts (a note, a load change). t is
// its offset on the run clock.
func (m *Monitor) Mark(t time.Duration, kind, message string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.events) == maxEvents {
		m.events = append(m.events[:0], m.events[1:]...)
	}
	m.events = append(m.events, Event{T: t.Seconds(), Kind: kind, Message: message})
}

// Elapsed is the run clock now (0 before Start).
func (m *Monitor) Elapsed() time.Duration {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.start.IsZero() {
		return 0
	}
	return m.elapsed()
}

// elapsed is the run's time so far, or its whole length once it
// finished: a page that lingers after the run shows the run's length,
// not a clock still counting. Call with m.mu held.
func (m *Monitor) elapsed() time.Duration {
	if m.final != nil {
		return m.end.Sub(m.start)
	}
	return m.now().Sub(m.start)
}

// Finish records the end of the run: the page shows f.
func (m *Monitor) Finish(f Final) {
	m.mu.Lock()
	defer m.mu.Unlock()
	end := m.next
	for sec := range m.open {
		end = max(end, sec+1)
	}
	m.closeUpTo(end)
	m.final, m.end = &f, m.now()
}

// Stragglers counts records that finished in a second already closed:
// they are in the totals but in no second's point (record.SecondOf).
func (m *Monitor) Stragglers() int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.straggled
}

// finished reports whether Finish was called.
func (m *Monitor) finished() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.final != nil
}

// View is the page's state: headline tiles, the points after a given
// sequence number, the tables and the events.
type View struct {
	Dir      string  `json:"dir"`
	ElapsedS float64 `json:"elapsed_s"`
	// TotalS is the planned duration in seconds, 0 when the run ends on
	// a request count.
	TotalS float64 `json:"total_s"`
	// Tiles: rates over the last rateSpanS closed seconds.
	ReqPerS     float64 `json:"req_per_s"`
	OutTokPerS  float64 `json:"out_tok_per_s"`
	FailureRate float64 `json:"failure_rate"`
	InFlight    int     `json:"in_flight"`
	Completed   int64   `json:"completed"`
	Failed      int64   `json:"failed"`
	OutTokens   int64   `json:"out_tokens"`
	// Seq is the number of points closed so far; From is the first
	// point's number in Points (ask for since=Seq next time).
	Seq     int64                        `json:"seq"`
	From    int64                        `json:"from"`
	Window  int                          `json:"window"`
	Points  []Point                      `json:"points"`
	Errors  []ErrorKind                  `json:"errors"`
	Classes map[string]*record.Breakdown `json:"classes"`
	Buckets []record.InputBucket         `json:"buckets"`
	// Sessions are the conversational classes' figures so far
	// (summary.json's sessions); absent when the run has no conversations.
	Sessions map[string]*record.SessionSummary `json:"sessions,omitempty"`
	// Chains are the chain and graph classes' task and per-node figures
	// so far (summary.json's chains); absent when the run has none.
	Chains map[string]*record.ChainSummary `json:"chains,omitempty"`
	Events []Event                         `json:"events"`
	// Telemetry are the samples numbered TelFrom and later (ask for
	// tel_since=TelSeq next time).
	Telemetry []TelemetryPoint `json:"telemetry"`
	TelSeq    int64            `json:"tel_seq"`
	TelFrom   int64            `json:"tel_from"`
	Final     *Final           `json:"final,omitempty"`
}

// rateSpanS is how many closed seconds the tiles' rates cover.
const rateSpanS = 5

// View returns the state with the points numbered since and the
// telemetry samples numbered telSince and later (all kept ones when older
// than the window, none when past the last one).
func (m *Monitor) View(since, telSince int64) View {
	m.mu.Lock()
	defer m.mu.Unlock()
	v := View{Dir: m.dir, TotalS: m.total.Seconds(), Seq: m.seq, Window: m.window,
		Completed: m.done, Failed: m.failed, OutTokens: m.outToks, Final: m.final}
	if !m.start.IsZero() {
		v.ElapsedS = m.elapsed().Seconds()
	}
	if m.inFl != nil && m.final == nil {
		v.InFlight = m.inFl()
	}
	first := m.seq - int64(len(m.points))
	v.From = min(max(since, first), m.seq) // past the last point: none yet
	v.Points = append([]Point(nil), m.points[v.From-first:]...)
	v.ReqPerS, v.OutTokPerS, v.FailureRate = m.rates()
	v.Errors = m.errorKinds()
	s := m.agg.Summary(record.RunInfo{})
	v.Classes, v.Buckets, v.Sessions, v.Chains = s.Classes, s.InputBuckets, s.Sessions, s.Chains
	v.Events = append([]Event(nil), m.events...)
	v.Telemetry, v.TelFrom = m.telemetrySince(telSince)
	v.TelSeq = m.telSeq
	return v
}

// rates are requests/s, output tokens/s and the failure share over the
// last rateSpanS closed seconds.
func (m *Monitor) rates() (req, tok, failRate float64) {
	n := min(len(m.points), rateSpanS)
	if n == 0 {
		return 0, 0, 0
	}
	var done, failed, toks int64
	for _, p := range m.points[len(m.points)-n:] {
		done, failed, toks = done+p.Completed, failed+p.Failed, toks+p.OutTokens
	}
	if done > 0 {
		failRate = float64(failed) / float64(done)
	}
	return float64(done) / float64(n), float64(toks) / float64(n), failRate
}

func (m *Monitor) errorKinds() []ErrorKind {
	out := make([]ErrorKind, 0, len(m.errs))
	for k, e := range m.errs {
		out = append(out, ErrorKind{Kind: k, Count: e.count, Latest: append([]string(nil), e.latest...)})
	}
	sort.Slice(out, func(i, j int) bool {
		return out[i].Count > out[j].Count || out[i].Count == out[j].Count && out[i].Kind < out[j].Kind
	})
	return out
}
