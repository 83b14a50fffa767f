package record

import "slices"

// SessionSummary is summary.json's sessions.<class>: the figures of a
// conversational class (turns > 1) per conversation, beside its
// per-request ones (docs/summary.md#sessions).
//
// A conversation is folded from its records (Result.Turn and Session)
// once all its turns are in. It is completed when every turn succeeded,
// failed when some turn failed for a reason other than the run's end, and
// incomplete when the run ended before its last turn (turns never sent,
// or cut off: ErrCanceled). A conversation whose first turn was warm-up
// is left out altogether.
type SessionSummary struct {
	// Turns is the class's turns per conversation.
	Turns int `json:"turns"`
	// Completed, Failed and Incomplete count the measured conversations.
	Completed  int64 `json:"completed"`
	Failed     int64 `json:"failed"`
	Incomplete int64 `json:"incomplete"`
	// Duration is a completed conversation's time to finish: its first
	// turn's latency origin (its send, in the closed loops conversations
	// run in) to its last turn's end, think times included.
	Duration Stats `json:"duration_ms"`
	// DurationBacked is the highest percentile of Duration its count backs
	// (the minimum-samples rule, docs/metrics.md); set by analyze.
	DurationBacked string `json:"duration_backed,omitempty"`
	// CallsPerSession is the mean number of calls (records) of a completed
	// conversation; InputTokensPerSession and OutputTokensPerSession are
	// its mean tokens summed over its turns (input tokens by the
	// per-request rule: the server's prompt_tokens, else the client's).
	CallsPerSession        float64 `json:"calls_per_session"`
	InputTokensPerSession  float64 `json:"input_tokens_per_session"`
	OutputTokensPerSession float64 `json:"output_tokens_per_session"`
	// Goodput is the conversations in which every call met its class's
	// SLO (the per-request rule, SLO.Met).
	Goodput SessionGoodput `json:"goodput"`
	// PerTurn has one row per turn number, from 1.
	PerTurn []TurnFigures `json:"per_turn"`
	// RepliesCut counts the measured turns whose reply was too long to
	// keep (Result.ReplyCut): the next turn's history carried synthetic
	// text in its place.
	RepliesCut int64 `json:"replies_cut,omitempty"`
}

// SessionGoodput is session goodput: whole conversations that met the SLO.
type SessionGoodput struct {
	// Met counts completed conversations every call of which met its SLO.
	Met int64 `json:"met"`
	// Attainment is Met ÷ (completed + failed), 0 when both are 0.
	Attainment float64 `json:"attainment"`
	// SessionsPerS is those conversations ending inside the measured
	// window ÷ window_s, as requests goodput is metered.
	SessionsPerS float64 `json:"sessions_per_s"`
}

// TurnFigures is one turn of a conversational class over its measured
// successful requests (of every conversation, as per-request figures
// are): how TTFT grows with the context a turn carries.
type TurnFigures struct {
	Turn     int   `json:"turn"`
	Requests int64 `json:"requests"`
	// InputTokensMean is the turn's mean prompt length (per-request rule).
	InputTokensMean float64 `json:"input_tokens_mean"`
	// TTFTP50 and TTFTP90 are over the turn's streamed replies (TTFTUS).
	TTFTP50 float64 `json:"ttft_p50_ms"`
	TTFTP90 float64 `json:"ttft_p90_ms"`
	// PrefixReuse sets the reuse the turn asked for (its previous turn's
	// prompt, and reply when the history carries the real one) against what the server served; nil for a first turn, which
	// asks for none (prefixreuse.go).
	PrefixReuse *PrefixReuse `json:"prefix_reuse,omitempty"`
}

// sessionState folds the records of conversations, per class. Turns is
// each conversational class's turns per conversation (SetSessionTurns);
// records of other classes are ignored.
type sessionState struct {
	SessionJoin
	classes map[string]*sessionAgg
}

// SessionJoin joins the records of conversations into whole ones: the one
// place a conversation is put together and judged, for summary.json's
// sessions and for compare's samples alike. Turns names the
// conversational classes and their turns per conversation; records of
// other classes are no conversation's.
type SessionJoin struct {
	Turns map[string]int
	open  map[uint64]*Conversation
}

// Add joins r to its conversation and returns that conversation once all
// its turns are in; nil before, and for a record of no conversation. It
// does not depend on the order records come in. met says whether r met
// its class's SLO.
func (j *SessionJoin) Add(r *Result, met bool) *Conversation {
	n := sessionCalls(r, j.Turns)
	if r.Turn == 0 || n == 0 {
		return nil
	}
	if j.open == nil {
		j.open = map[uint64]*Conversation{}
	}
	s := j.open[r.Session]
	if s == nil {
		s = &Conversation{class: classOf(r), startUS: r.OriginUS(), endUS: r.DoneUS()}
		j.open[r.Session] = s
	}
	s.add(r, met)
	if s.calls < n {
		return nil
	}
	delete(j.open, r.Session)
	return s
}

// sessionCalls is how many records make r's conversation whole: its own
// SessionCalls when it says (a recorded session: any length, one call
// included), else its class's turns when they are 2 or more (turns);
// 0 when r is no conversation's.
func sessionCalls(r *Result, turns map[string]int) int {
	if r.SessionCalls > 0 {
		return r.SessionCalls
	}
	if n := turns[classOf(r)]; n >= 2 {
		return n
	}
	return 0
}

// Class is the conversation's class.
func (s *Conversation) Class() string { return s.class }

// Completed reports whether a whole conversation (SessionJoin.Add
// returned it) counts as completed: measured, every turn succeeded.
func (s *Conversation) Completed() bool { return !s.warm && !s.failed && !s.canceled }

// Counted reports whether a whole conversation counts in session
// goodput's total: measured, and completed or failed (one cut short by a
// cancel is neither).
func (s *Conversation) Counted() bool { return !s.warm && (s.failed || !s.canceled) }

// Met reports whether a whole conversation met session goodput's rule:
// completed, every call within its class's SLO.
func (s *Conversation) Met() bool { return s.Completed() && !s.missed }

// DurationUS is a completed conversation's time to finish: its first
// turn's latency origin to its last turn's end.
func (s *Conversation) DurationUS() int64 { return s.endUS - s.startUS }

// Conversation is one conversation as its records came in.
type Conversation struct {
	class                  string
	calls                  int
	warm, failed, canceled bool
	missed                 bool // some call missed its SLO
	startUS, endUS         int64
	in, out                int64
}

// sessionAgg is one conversational class's figures so far.
type sessionAgg struct {
	completed, failed, incomplete int64
	duration                      *Hist
	calls, in, out                int64 // over completed conversations
	met                           int64
	good                          flopMeter // met conversations by end instant
	repliesCut                    int64
	turns                         []*turnAgg
}

type turnAgg struct {
	requests, in int64
	ttft         *Hist
	reuse        prefixReuseState
}

// SetSessionTurns names the conversational classes and their turns per
// conversation (classes with turns > 1); without it no session figures
// are folded. Call it before the first Add.
func (a *Aggregate) SetSessionTurns(turns map[string]int) {
	a.sessions.Turns = turns
}

// add folds in one record; met says whether it met its class's SLO. Its
// conversation is judged once all its turns are in, so the figures do not
// depend on the order records come in.
func (st *sessionState) add(r *Result, met bool) {
	if r.Turn == 0 || sessionCalls(r, st.Turns) == 0 {
		return
	}
	if st.classes == nil {
		st.classes = map[string]*sessionAgg{}
	}
	c := st.class(classOf(r))
	if r.MeasuredSuccess() {
		c.turn(r.Turn).add(r)
		if r.ReplyCut {
			c.repliesCut++
		}
	}
	if s := st.Add(r, met); s != nil {
		c.close(s, true)
	}
}

func (s *Conversation) add(r *Result, met bool) {
	s.calls++
	s.warm = s.warm || r.Warmup
	switch r.Error {
	case ErrNone:
	case ErrCanceled:
		s.canceled = true
	default:
		s.failed = true
	}
	s.missed = s.missed || !met
	s.startUS, s.endUS = min(s.startUS, r.OriginUS()), max(s.endUS, r.DoneUS())
	s.in += int64(inputTokens(r))
	s.out += int64(r.OutputTokens)
}

func (st *sessionState) class(name string) *sessionAgg {
	c := st.classes[name]
	if c == nil {
		c = &sessionAgg{duration: NewHist()}
		st.classes[name] = c
	}
	return c
}

func (c *sessionAgg) turn(k int) *turnAgg {
	for len(c.turns) < k {
		c.turns = append(c.turns, &turnAgg{ttft: NewHist()})
	}
	return c.turns[k-1]
}

func (t *turnAgg) add(r *Result) {
	t.requests++
	t.in += int64(inputTokens(r))
	t.reuse.add(r)
	if ttft, ok := TTFTUS(r); ok {
		t.ttft.Record(ttft)
	}
}

// close judges a conversation; whole says all its turns came in.
func (c *sessionAgg) close(s *Conversation, whole bool) {
	switch {
	case s.warm:
	case s.failed:
		c.failed++
	case s.canceled || !whole:
		c.incomplete++
	default:
		c.completed++
		c.duration.Record(s.DurationUS())
		c.calls += int64(s.calls)
		c.in += s.in
		c.out += s.out
		if s.Met() {
			c.met++
			c.good.add(s.endUS, 1)
		}
	}
}

// summary gives each conversational class's figures over the window
// [from, to]; nil when no conversation ran. The conversations still open
// are judged as cut by the run's end on a copy, so Add may go on.
func (st *sessionState) summary(from, to int64, windowS float64) map[string]*SessionSummary {
	if len(st.classes) == 0 {
		return nil
	}
	final := make(map[string]*sessionAgg, len(st.classes))
	for name, c := range st.classes {
		cc := *c
		final[name] = &cc
	}
	for _, s := range st.open {
		c := final[s.class]
		// The copy shares the histogram and meter: an open conversation
		// only counts, never records (close records only completed ones).
		c.close(s, false)
	}
	out := make(map[string]*SessionSummary, len(final))
	for name, c := range final {
		out[name] = c.summary(st.Turns[name], from, to, windowS)
	}
	return out
}

func (c *sessionAgg) summary(turns int, from, to int64, windowS float64) *SessionSummary {
	s := &SessionSummary{Turns: turns, Completed: c.completed, Failed: c.failed, Incomplete: c.incomplete,
		Duration:        c.duration.Stats(),
		CallsPerSession: ratio(c.calls, c.completed), InputTokensPerSession: ratio(c.in, c.completed),
		OutputTokensPerSession: ratio(c.out, c.completed),
		Goodput: SessionGoodput{Met: c.met, Attainment: ratio(c.met, c.completed+c.failed),
			SessionsPerS: perSecond(c.good.over(from, to), windowS)},
		PerTurn:    make([]TurnFigures, 0, len(c.turns)),
		RepliesCut: c.repliesCut,
	}
	for k, t := range c.turns {
		ttft := t.ttft.Stats() // the percentiles every TTFT figure reports
		s.PerTurn = append(s.PerTurn, TurnFigures{Turn: k + 1, Requests: t.requests,
			InputTokensMean: ratio(t.in, t.requests), TTFTP50: ttft.P50, TTFTP90: ttft.P90, PrefixReuse: t.reuse.summary()})
	}
	return s
}

// SessionClasses are the names of s's conversational classes, sorted.
func SessionClasses(s map[string]*SessionSummary) []string {
	names := make([]string, 0, len(s))
	for name := range s {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}

// classOf is r's class, DefaultClass when unnamed.
func classOf(r *Result) string {
	if r.Class == "" {
		return DefaultClass
	}
	return r.Class
}
