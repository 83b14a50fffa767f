package analyze

import (
	"slices"

	"github.com/inferload/inferload/record"
)

// RunSamples is what a comparison needs from one run: the raw latency
// values (not histograms: resampling needs the values), failure counts,
// per-second throughput and the environment.
type RunSamples struct {
	// Name labels the run in reports (its directory's base name).
	Name    string
	Overall *Samples
	// Classes are keyed by class name ("default" for unclassed requests).
	Classes map[string]*Samples
	// OutputTokensPerS and RequestsPerS hold one value per whole second
	// of the measured window: what was delivered in that second.
	OutputTokensPerS []float64
	RequestsPerS     []float64
	// Env is env.json decoded into generic JSON values; nil when absent.
	Env map[string]any
	// NotValid holds the run's own validity reasons when its summary.json
	// judged it NOT VALID; nil when it was valid or has no verdict (a
	// staged run, a run without summary.json).
	NotValid []string
	// SessionGoodput and TaskGoodput are, per class, the shares of
	// sessions and of tasks that met every call's SLO, as the run's
	// summary.json judged them (compare_goodput.go); nil without any.
	// Set them before the first Add: Add judges each session and task by
	// their SLOs as it finishes, the order the runs check's batches need.
	SessionGoodput map[string]GoodputShare
	TaskGoodput    map[string]GoodputShare

	// delivered counts every added record's completions and tokens per
	// second until Close cuts the measured window from it.
	delivered  record.Deliveries
	lastDoneUS int64
	records    int64
	// sessions joins conversations' turns (SetSessionTurns).
	sessions record.SessionJoin
	// verdicts are, per goodput figure, its sessions' or tasks' verdicts
	// in the order they finished (compare_goodput.go).
	verdicts map[string][]verdict
}

// SetSessionTurns names the conversational classes and their turns per
// conversation (summary.json's sessions.<class>.turns), so Add joins
// their records into conversations and keeps each completed one's time
// to finish (Samples.Session). Call it before the first Add.
func (rs *RunSamples) SetSessionTurns(turns map[string]int) {
	rs.sessions.Turns = turns
}

// Samples are the measured latencies (ms) and outcome counts of a set of
// requests, counted by the rules of summary.json: warm-up records and
// expected rejections are left out, latencies come from successes only,
// TTFT and TPOT from streamed successes with a content event. The
// latency slices keep the order records came in (completion order), which
// the batch-means check cuts into contiguous batches.
type Samples struct {
	TTFT, ITL, TPOT, E2E []float64
	// TTFO is the time to the first answer token (record.TTFOUSOf: the
	// TTFT of a reply that did not reason), kept from the first reply
	// that reasoned on; nil while none has.
	TTFO []float64
	// Session is each completed conversation's time to finish, in the
	// order they completed (RunSamples.SetSessionTurns); nil without any.
	Session []float64
	// Task is each successful chain or graph task's time to finish (its
	// record's E2E, summary.json's chains.<class>.e2e_ms), in record order;
	// Nodes is, per graph node (record.NodeName: a fan-out's copies
	// together), its calls' own latencies in successful tasks, as
	// chains.<class>.steps[].latency_ms counts them. Both nil without any.
	Task              []float64
	Nodes             map[string][]float64
	Succeeded, Failed int64
	// Graded counts the graded measured successes, Correct those that
	// held their expected answer (record.Accuracy's rule).
	Graded, Correct int64
	// correctAt marks, in record order, which graded replies were right.
	correctAt []bool
	// Cache is the successes' prompt tokens and those served cached.
	Cache PromptCache
	// failedAt marks, in record order, which counted requests failed.
	failedAt []bool
	sorted   map[string][]float64
}

// NewRunSamples returns empty samples named name, ready for Add.
func NewRunSamples(name string) *RunSamples {
	return &RunSamples{Name: name, Overall: &Samples{}, Classes: map[string]*Samples{}}
}

// Add counts one record in the run and in its class, and its deliveries
// in the run's per-second throughput.
func (rs *RunSamples) Add(r *record.Result) {
	rs.records++
	rs.lastDoneUS = max(rs.lastDoneUS, r.DoneUS())
	rs.delivered.Add(r)
	rs.Overall.Add(r)
	class := r.Class
	if class == "" {
		class = record.DefaultClass
	}
	s := rs.Classes[class]
	if s == nil {
		s = &Samples{}
		rs.Classes[class] = s
	}
	s.Add(r)
	rs.judgeTask(r, class)
	c := rs.sessions.Add(r, rs.SessionGoodput[class].SLO.Met(r))
	if c == nil {
		return
	}
	rs.judgeSession(c)
	if c.Completed() {
		ms := usToMS(c.DurationUS())
		rs.Overall.Session = append(rs.Overall.Session, ms)
		s.Session = append(s.Session, ms)
		s.sorted, rs.Overall.sorted = nil, nil
	}
}

// Records is how many records Add has counted, warm-up and failures
// included.
func (rs *RunSamples) Records() int64 { return rs.records }

// Close sets RequestsPerS and OutputTokensPerS to the whole seconds of
// the measured window the run's clock marks give: from the end of
// warm-up to when issuing stopped, else the run's end, else (a killed
// run has neither) the last completion.
func (rs *RunSamples) Close(info record.RunInfo) {
	end := rs.lastDoneUS
	switch {
	case info.MeasureEndUS > 0:
		end = info.MeasureEndUS
	case info.EndUS > 0:
		end = info.EndUS
	}
	rs.RequestsPerS, rs.OutputTokensPerS = rs.delivered.Window(info.WarmupEndUS, end)
}

// Add counts one record.
func (s *Samples) Add(r *record.Result) {
	if r.Warmup || r.ExpectedRejection() {
		return
	}
	s.sorted = nil
	s.failedAt = append(s.failedAt, !r.OK())
	if !r.MeasuredSuccess() {
		s.Failed++
		return
	}
	s.Succeeded++
	s.Cache.add(r)
	if r.Graded {
		s.Graded++
		if r.Correct {
			s.Correct++
		}
		s.correctAt = append(s.correctAt, r.Correct)
	}
	if r.ReasoningEvents > 0 && s.TTFO == nil {
		// Every reply before this one did not reason: its TTFO is its
		// TTFT, already kept.
		s.TTFO = slices.Clone(s.TTFT)
		if s.TTFO == nil {
			s.TTFO = []float64{}
		}
	}
	if ttfo, ok := record.TTFOUSOf(r); ok && s.TTFO != nil {
		s.TTFO = append(s.TTFO, usToMS(ttfo))
	}
	s.E2E = append(s.E2E, usToMS(r.E2EUS))
	s.addTask(r)
	r.EachGap(func(gapUS, n int64) {
		for range n {
			s.ITL = append(s.ITL, usToMS(gapUS))
		}
	})
	ttft, ok := record.TTFTUS(r)
	if !ok {
		return
	}
	s.TTFT = append(s.TTFT, usToMS(ttft))
	if tpot, ok := record.TPOTUS(r); ok {
		s.TPOT = append(s.TPOT, usToMS(tpot))
	}
}

// addTask keeps a successful chain or graph task's time to finish and
// its nodes' latencies; a plain request has no chain and adds nothing.
func (s *Samples) addTask(r *record.Result) {
	if len(r.Chain) == 0 {
		return
	}
	s.Task = append(s.Task, usToMS(r.E2EUS))
	if s.Nodes == nil {
		s.Nodes = map[string][]float64{}
	}
	for _, st := range r.Chain {
		if st.Skipped || st.Error != record.ErrNone {
			continue
		}
		name := record.NodeName(st.Name)
		s.Nodes[name] = append(s.Nodes[name], usToMS(st.DurUS))
	}
}

func usToMS(us int64) float64 { return float64(us) / 1000 }

// Scaled is a copy of s with every latency times f: a planted slowdown
// of the same requests, in the same order, for measuring compare.
func (s *Samples) Scaled(f float64) *Samples {
	scale := func(v []float64) []float64 {
		if v == nil {
			return nil
		}
		out := make([]float64, len(v))
		for i, x := range v {
			out[i] = x * f
		}
		return out
	}
	return &Samples{TTFT: scale(s.TTFT), ITL: scale(s.ITL), TPOT: scale(s.TPOT), E2E: scale(s.E2E), TTFO: scale(s.TTFO), Session: scale(s.Session),
		Task: scale(s.Task), Nodes: scaleNodes(s.Nodes, scale),
		Succeeded: s.Succeeded, Failed: s.Failed, Cache: s.Cache, failedAt: slices.Clone(s.failedAt),
		Graded: s.Graded, Correct: s.Correct, correctAt: slices.Clone(s.correctAt)}
}

func scaleNodes(nodes map[string][]float64, scale func([]float64) []float64) map[string][]float64 {
	if nodes == nil {
		return nil
	}
	out := make(map[string][]float64, len(nodes))
	for name, v := range nodes {
		out[name] = scale(v)
	}
	return out
}

// merge appends o's values and counts to s's.
func (s *Samples) merge(o *Samples) {
	if s.TTFO != nil || o.TTFO != nil {
		s.TTFO = append(ttfoOf(s), ttfoOf(o)...)
	}
	s.TTFT, s.ITL = append(s.TTFT, o.TTFT...), append(s.ITL, o.ITL...)
	s.TPOT, s.E2E = append(s.TPOT, o.TPOT...), append(s.E2E, o.E2E...)
	s.Session = append(s.Session, o.Session...)
	s.Task = append(s.Task, o.Task...)
	for name, v := range o.Nodes {
		if s.Nodes == nil {
			s.Nodes = map[string][]float64{}
		}
		s.Nodes[name] = append(s.Nodes[name], v...)
	}
	s.Succeeded, s.Failed = s.Succeeded+o.Succeeded, s.Failed+o.Failed
	s.Cache.PromptTokens += o.Cache.PromptTokens
	s.Cache.CachedTokens += o.Cache.CachedTokens
	s.failedAt = append(s.failedAt, o.failedAt...)
	s.Graded, s.Correct = s.Graded+o.Graded, s.Correct+o.Correct
	s.correctAt = append(s.correctAt, o.correctAt...)
	s.sorted = nil
}

// ttfoOf is s's TTFO values: its TTFTs when none of its replies
// reasoned (a reply that did not reason answers at its first token).
func ttfoOf(s *Samples) []float64 {
	if s.TTFO != nil {
		return s.TTFO
	}
	return append([]float64{}, s.TTFT...)
}

// values returns the sorted samples of a latency metric ("ttft_ms", ...),
// a sorted copy: the slices themselves stay in record order.
func (s *Samples) values(metric string) []float64 {
	if v, ok := s.sorted[metric]; ok {
		return v
	}
	v := slices.Clone(s.ordered(metric))
	slices.Sort(v)
	if s.sorted == nil {
		s.sorted = map[string][]float64{}
	}
	s.sorted[metric] = v
	return v
}

// ordered returns a latency metric's values in record order.
func (s *Samples) ordered(metric string) []float64 {
	switch metric {
	case "ttft_ms":
		return s.TTFT
	case "itl_ms":
		return s.ITL
	case "tpot_ms":
		return s.TPOT
	case "e2e_ms":
		return s.E2E
	case "ttfo_ms":
		return s.TTFO
	case "session_ms":
		return s.Session
	case "task_ms":
		return s.Task
	}
	if name, ok := nodeMetric(metric); ok {
		return s.Nodes[name]
	}
	return nil
}
