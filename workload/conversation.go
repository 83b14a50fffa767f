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

// Session is one closed-loop virtual user's stream of requests. Unlike a
// Source it has state: a conversation's k-th turn carries the k earlier
// turns. It is used by one goroutine (its user) only.
type Session interface {
	// Next returns the spec of the user's next request, which the run
	// numbers i (i only becomes Spec.Index: the content depends on the
	// user and how many requests it sent before, never on timing).
	Next(i uint64) Spec
}

// Session returns user's stream of requests when some class holds
// multi-turn conversations, nil when none does (every request is then
// Spec(i), as in an open loop).
//
// User u's requests are a pure function of (Seed, u, how many requests u
// sent before): its c-th conversation is keyed by (u, c); that key draws
// bad input or the class — by weight/turns, so weights stay shares of
// requests — and each turn t's new user message is the class's
// Spec(key+t). The assistant turns in the history are synthetic text of
// the asked output length (MaxTokens), not the server's replies: the
// same plan and seed then send byte-identical bodies whatever the
// server answered, and the protocol does not keep reply text.
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
	// prevIn is the previous turn's prompt tokens: all of it opens this
	// turn's prompt, so a prefix cache may serve it (its synthetic reply,
	// which the server did not write, it cannot).
	prevIn int
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
		spec.ReuseTokens, spec.PrefixGroup, spec.PrefixTokens = s.prevIn, 0, 0
	}
	s.prevIn = spec.InputTokens
	reply := Text(rand.New(rand.NewPCG(m.seed^sessionStream, splitmix64(turnKey))), spec.MaxTokens)
	s.history = append(spec.Messages[:len(spec.Messages):len(spec.Messages)], ChatMessage{Role: "assistant", Content: reply})
	s.histTok = spec.InputTokens + spec.MaxTokens
	s.turn++
	if s.turn >= m.turns[s.class] {
		s.turn = 0
	}
	return spec
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
