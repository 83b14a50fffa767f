package protocol

import (
	"bytes"
	"encoding/json"
	"strings"
)

// keepReply appends one content-carrying JSON object to t.Reply, unless
// that would take it past limit bytes: a reply is kept whole or cut at an
// object's edge, never mid-object, so what was kept always parses.
func (t *Trace) keepReply(obj []byte, limit int) {
	if t.ReplyCut || len(t.Reply)+len(obj)+1 > limit {
		t.ReplyCut = true
		return
	}
	t.Reply = append(t.Reply, obj...)
	t.Reply = append(t.Reply, '\n')
}

// ReplyToolCall is one function call of a kept reply, its arguments
// joined from every delta that carried a piece of them; ID is the call's
// id as the reply gave it (a streamed call's first delta carries it),
// what a tool role message answering it names as tool_call_id.
type ReplyToolCall struct {
	ID        string
	Name      string
	Arguments string
}

// replyObject is what ReplyAnswer reads of a chunk or whole reply.
type replyObject struct {
	messagesObject
	ollamaReply
	Choices []struct {
		Index   int        `json:"index"`
		Text    string     `json:"text"`
		Delta   *replyPart `json:"delta"`
		Message *replyPart `json:"message"`
	} `json:"choices"`
}

type replyPart struct {
	Content   string `json:"content"`
	ToolCalls []struct {
		Index    *int   `json:"index"`
		ID       string `json:"id"`
		Function struct {
			Name      string `json:"name"`
			Arguments string `json:"arguments"`
		} `json:"function"`
	} `json:"tool_calls"`
}

// ReplyAnswer reads the answer of the first choice (index 0) from a
// kept reply (Trace.Reply): its text, joined from every chunk, and its
// tool calls. A streamed tool call arrives in pieces keyed by index (the
// name first, the arguments spread over later deltas); a whole reply's
// calls have no index and keep their order. It runs once per graded
// request, after the reply ended, so it may allocate; an object that does
// not parse is skipped. The Messages API's events and message objects
// are read too (messagesAnswer), and Ollama's objects (addOllama).
func ReplyAnswer(kept []byte) (text string, calls []ReplyToolCall) {
	var b strings.Builder
	var anthropic messagesAnswer
	for line := range bytes.SplitSeq(kept, []byte("\n")) {
		var o replyObject
		if len(line) == 0 || json.Unmarshal(line, &o) != nil {
			continue
		}
		if anthropic.add(&o.messagesObject, &b, &calls) || addOllama(&o.ollamaReply, &b, &calls) {
			continue
		}
		for _, c := range o.Choices {
			if c.Index != 0 {
				continue
			}
			b.WriteString(c.Text)
			for _, p := range []*replyPart{c.Delta, c.Message} {
				if p == nil {
					continue
				}
				b.WriteString(p.Content)
				for k, tc := range p.ToolCalls {
					i := k
					if tc.Index != nil {
						i = *tc.Index
					}
					if i < 0 || i > len(calls) {
						continue // a gap in the indexes: not a call we can place
					}
					if i == len(calls) {
						calls = append(calls, ReplyToolCall{})
					}
					if tc.ID != "" {
						calls[i].ID = tc.ID
					}
					if tc.Function.Name != "" {
						calls[i].Name = tc.Function.Name
					}
					calls[i].Arguments += tc.Function.Arguments
				}
			}
		}
	}
	return b.String(), calls
}

// keepText appends a chunk's answer text to t.Text, unless that would
// take it past limit bytes (a piece is kept whole or not at all, so what
// was kept always decodes), and notes a tool call, keeping the object obj
// that carried it (t.ToolCallReply, within limit too): only a reply that
// calls a tool pays for that, one copy of a chunk or two. The first
// object that does not fit cuts the calls (ToolCallsCut) and nothing
// after it is kept: a later, smaller piece would leave a hole in a
// call's arguments.
func (t *Trace) keepText(ck *Chunk, obj []byte, limit int) {
	if ck.ToolCalls {
		t.keepToolCall(obj, limit)
	}
	t.keepTextPiece(ck.Text, limit)
}

// keepToolCall notes a tool call and keeps the object obj that carried
// (a piece of) it, within limit; the first object that does not fit cuts
// the calls (ToolCallsCut) and nothing after it is kept.
func (t *Trace) keepToolCall(obj []byte, limit int) {
	t.ToolCalls = true
	if t.ToolCallsCut || len(t.ToolCallReply)+len(obj)+1 > limit {
		t.ToolCallsCut = true
		return
	}
	t.ToolCallReply = append(append(t.ToolCallReply, obj...), '\n')
}

// keepTextPiece appends raw answer text (JSON string contents) to
// t.Text, whole or not at all, within limit.
func (t *Trace) keepTextPiece(raw []byte, limit int) {
	if raw == nil || t.TextCut {
		return
	}
	if len(t.Text)+len(raw) > limit {
		t.TextCut = true
		return
	}
	t.Text = append(t.Text, raw...)
}

// AnswerText is the kept answer text (Request.KeepText), its escapes
// decoded. Each piece kept is a JSON string's whole contents, so their
// concatenation decodes as one string.
func (t *Trace) AnswerText() string {
	if bytes.IndexByte(t.Text, '\\') < 0 {
		return string(t.Text)
	}
	return string(appendUnescaped(nil, t.Text))
}

// ReplyToolCalls reads the tool calls of a reply kept with
// Request.KeepText (ReplyAnswer on the objects that carried them, so a
// streamed call's pieces are joined): their ids, names and arguments as
// the reply had them; nil when it called none or they did not all fit
// (ToolCallsCut): a call with part of its arguments is one the model
// never made, and answering it would send the server a request it could
// reject or misread.
func (t *Trace) ReplyToolCalls() []ReplyToolCall {
	if len(t.ToolCallReply) == 0 || t.ToolCallsCut {
		return nil
	}
	_, calls := ReplyAnswer(t.ToolCallReply)
	return calls
}

// appendUnescaped appends a JSON string's raw contents, escapes decoded.
func appendUnescaped(b, raw []byte) []byte {
	if bytes.IndexByte(raw, '\\') < 0 {
		return append(b, raw...)
	}
	var s string
	quoted := make([]byte, 0, len(raw)+2)
	quoted = append(append(append(quoted, '"'), raw...), '"')
	if json.Unmarshal(quoted, &s) != nil {
		return b
	}
	return append(b, s...)
}

// KeepsText reports whether Request.KeepText keeps a's answer text and
// tool calls: the chat and completions APIs' chunks and bodies, the
// Messages API's events and bodies (messages_reply.go) and Ollama's
// /api/chat objects (ollama_tools.go).
func (a API) KeepsText() bool {
	return a == APIChat || a == APICompletions || a == APIMessages || a == APIOllama
}
