package engine

import (
	"fmt"

	"github.com/inferload/inferload/protocol"
	"github.com/inferload/inferload/record"
	"github.com/inferload/inferload/workload"
)

// sessionSource is a Source that can give each closed-loop user its own
// stateful stream of requests (multi-turn conversations).
type sessionSource interface {
	Session(user uint64) workload.Session
}

// session returns closed-loop user id's request stream, or nil when the
// source has none and every request is Source.Spec(i).
func (e *Engine) session(id uint64) workload.Session {
	if src, ok := e.cfg.Source.(sessionSource); ok {
		return src.Session(id)
	}
	return nil
}

// prepareNext renders user's next request, numbered i, from its session
// (or from Spec(i) without one). prev is the id the server gave the
// user's last reply: a later turn of the same conversation carries it, so
// a server holding the history (the Responses API) is sent the new turn
// only. conv is the user's current conversation (Spec.Session): a first
// turn starts it at its own index, so it is unique in the run once the
// index is. A session's requests carry the user as their affinity, so a
// client over replicas keeps the user's conversations on one of them.
func (e *Engine) prepareNext(sess workload.Session, user, i uint64, prev string, conv *uint64) (prepared, error) {
	if sess == nil {
		return e.prepare(i)
	}
	spec := sess.Next(i)
	if spec.Turn > 0 {
		spec.PreviousResponseID = prev
	}
	if spec.Turns > 0 {
		if spec.Turn == 0 {
			*conv = i
		}
		spec.Session = *conv
	}
	e.cfg.Prefixes.mark(&spec)
	req, err := e.cfg.Render(spec)
	if err != nil {
		return prepared{spec: spec}, fmt.Errorf("rendering request %d: %w", i, err)
	}
	withUser := *req // a renderer may share one request between specs
	withUser.Affinity = user + 1
	if spec.KeepReply && req.API.KeepsText() {
		// Replies are read back (Trace.Text, kept as the reply is parsed)
		// where the request carries the history (chat, messages); the
		// Responses API's server holds it itself.
		withUser.KeepText = record.MaxReplyKept
	}
	return prepared{spec: spec, req: &withUser, sess: sess}, nil
}

// threadReply hands a conversation turn's reply to its session, which
// puts it in the next turn's history: its text as kept, its length the
// server's count when it reported one (reasoning left out: the history
// holds the answer only), else the session's tokenizer's. A failed turn
// hands nothing, so its synthetic text stays, as a server that kept no
// reply would have it; a reply cut at the keep limit, or with no text
// to read, is marked on its record (ReplyCut) and hands nothing either:
// a part of the reply would be text the server never wrote as a whole.
func threadReply(r *record.Result, p prepared, tr *protocol.Trace) {
	if p.sess == nil || p.req.KeepText == 0 || !p.spec.KeepReply || r.Error != record.ErrNone {
		return
	}
	text := tr.AnswerText()
	if tr.TextCut || text == "" {
		r.ReplyCut = true
		return
	}
	n := 0
	if r.TokenSource == record.TokensUsage && r.ReasoningTokens == 0 {
		n = r.OutputTokens
	}
	p.sess.Reply(text, n)
}

// conversationOf is a record's turn (1-based) and session for spec; 0, 0
// for a single request.
func conversationOf(spec workload.Spec) (turn int, session uint64) {
	if spec.Turns == 0 {
		return 0, 0
	}
	return spec.Turn + 1, spec.Session
}
