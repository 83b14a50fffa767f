package workload

import (
	"math/rand/v2"
	"slices"
)

// MaxTurns bounds ClassConfig.Turns: the history, and so the prompt,
// grows with every turn.
const MaxTurns = 1000

// sessionStream separates the draws that start a conversation (bad input
// or which class) from every other draw.
const sessionStream = 0x5e55_1035

// Session is one user's stream of requests (a closed-loop user's, or one
// open-loop conversation's). Unlike a Source it has state: a
// conversation's k-th turn carries the k earlier turns. It is used by one
// goroutine (its user) only.
type Session interface {
	// Next returns the spec of the user's next request, which the run
	// numbers i (i only becomes Spec.Index: the content depends on the
	// user, how many requests it sent before and the replies it was
	// handed, never on timing).
	Next(i uint64) Spec
	// Reply hands the session the server's reply to the request Next
	// last returned, when that spec asked for it (Spec.KeepReply): its
	// text, and its length in tokens as the server reported it (0: not
	// reported, the class's tokenizer counts it). The next turn's history
	// carries it in place of the synthetic text. Without a call (the turn
	// failed, or its reply was cut) the synthetic text stays.
	Reply(text string, outTokens int)
}

// Session returns user's stream of requests when some class holds
// multi-turn conversations, nil when none does (every request is then
// Spec(i)).
//
// User u's requests are a pure function of (Seed, u, how many requests u
// sent before, the replies handed to Reply): its c-th conversation is
// keyed by (u, c); that key draws bad input or the class — by
// weight/turns, so weights stay shares of requests — and each turn t's
// new user message is the class's Spec(key+t). The assistant turns in the
// history are the server's replies (Reply), or, for a class with
// SyntheticHistory, a turn that failed or a reply that was not kept whole,
// synthetic text of the asked output length (MaxTokens): with
// SyntheticHistory the same plan and seed send byte-identical bodies
// whatever the server answered.
func (m *Mix) Session(user uint64) Session {
	if m.convCum == nil {
		return nil
	}
	return &mixSession{m: m, user: user}
}

// mixSession is a Mix's Session for one user.
type mixSession struct {
	m       *Mix
	user    uint64
	conv    uint64 // conversations started so far
	class   int    // current conversation's class
	key     uint64 // current conversation's key
	turn    int    // next turn of the current conversation; 0: start one
	history []ChatMessage
	histTok int // tokens in history (message contents only)
	// reuse is how much of the next turn's prompt a prefix cache may
	// serve: the previous turn's whole prompt, plus its reply when that
	// is the server's own (the server wrote it into its cache; a
	// synthetic reply it never saw it cannot serve).
	reuse int
	// awaiting is true while the last turn's reply may still be handed
	// in (Spec.KeepReply).
	awaiting bool
}

// Next starts a conversation when the last one is over, then sends its
// next turn.
func (s *mixSession) Next(i uint64) Spec {
	if s.turn == 0 {
		if spec, single := s.start(i); single {
			return spec
		}
	}
	return s.next(i)
}

// start draws the user's next conversation. It returns the spec and true
// when that conversation is a single request (bad input or a one-turn
// class).
func (s *mixSession) start(i uint64) (Spec, bool) {
	m := s.m
	s.key = splitmix64(splitmix64(s.user) ^ s.conv)
	s.conv++
	u := rand.New(rand.NewPCG(m.seed^sessionStream, s.key)).Float64()
	if u < m.badFrac {
		return withIndex(m.bad.Spec(s.key), i), true
	}
	u = (u - m.badFrac) / (1 - m.badFrac)
	s.class = len(m.convCum) - 1
	for k, c := range m.convCum {
		if u < c {
			s.class = k
			break
		}
	}
	if m.turns[s.class] <= 1 {
		return withIndex(m.sources[s.class].Spec(s.key), i), true
	}
	s.history, s.histTok = nil, 0
	return Spec{}, false
}

// next builds the current conversation's next turn and remembers it, with
// a synthetic reply, in the history.
func (s *mixSession) next(i uint64) Spec {
	m := s.m
	turnKey := s.key + uint64(s.turn)
	spec := m.sources[s.class].Spec(turnKey)
	spec.Index, spec.Turn, spec.Turns = i, s.turn, m.turns[s.class]
	user := spec.Messages
	if len(user) == 0 {
		// The turn's images join its message, so later turns resend them
		// with the history, as a chat client does.
		user = []ChatMessage{{Role: "user", Content: spec.Prompt, Images: spec.Images}}
		spec.Images = nil
	}
	spec.Messages = append(slices.Clip(s.history), user...)
	spec.InputTokens += s.histTok
	if s.turn > 0 {
		// The turn's own message may open with a shared prefix, but in
		// the middle of the prompt no prefix cache can serve it.
		spec.ReuseTokens, spec.PrefixGroup, spec.PrefixTokens = s.reuse, 0, 0
	}
	s.reuse = spec.InputTokens
	reply := Text(rand.New(rand.NewPCG(m.seed^sessionStream, splitmix64(turnKey))), spec.MaxTokens)
	s.history = append(spec.Messages[:len(spec.Messages):len(spec.Messages)], ChatMessage{Role: "assistant", Content: reply})
	s.histTok = spec.InputTokens + spec.MaxTokens
	s.turn++
	if s.turn >= m.turns[s.class] {
		s.turn = 0
	}
	// The last turn's reply has no next turn to carry it.
	s.awaiting = !m.synthetic[s.class] && s.turn != 0
	spec.KeepReply = s.awaiting
	return spec
}

// Reply puts the server's reply in place of the synthetic text that
// closes the history, so the next turn carries what the server wrote, and
// counts it as reusable: the server cached it as it wrote it.
func (s *mixSession) Reply(text string, outTokens int) {
	if !s.awaiting {
		return
	}
	s.awaiting = false
	if outTokens <= 0 {
		outTokens = s.tokenizer().Count(text)
	}
	s.history[len(s.history)-1].Content = text
	s.histTok = s.reuse + outTokens
	s.reuse += outTokens
}

// tokenizer is what counts a reply the server gave no length for: the
// class's tokenizer, else cl100k_base (the synthetic text's own).
func (s *mixSession) tokenizer() Tokenizer {
	if t := s.m.tokenizers[s.class]; t != nil {
		return t
	}
	return defaultTokenizer()
}

// conversationWeights sets the per-conversation class draw when some
// class has Turns > 1: weight/turns, so each class's share of requests
// stays its weight.
func (m *Mix) conversationWeights(classes []ClassConfig) {
	multi, total := false, 0.0
	for _, c := range classes {
		t := max(c.Turns, 1)
		multi = multi || t > 1
		m.turns = append(m.turns, t)
		total += c.Weight / float64(t)
		m.convCum = append(m.convCum, total)
	}
	if !multi {
		m.turns, m.convCum = nil, nil
		return
	}
	for k := range m.convCum {
		m.convCum[k] /= total
	}
}

// withIndex numbers a spec drawn by key as the run's request i.
func withIndex(s Spec, i uint64) Spec {
	s.Index = i
	return s
}
