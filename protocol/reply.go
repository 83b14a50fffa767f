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
// joined from every delta that carried a piece of them.
type ReplyToolCall struct {
	Name      string
	Arguments string
}

// replyObject is what ReplyAnswer reads of a chunk or whole reply.
type replyObject struct {
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
		Index    *int `json:"index"`
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
// not parse is skipped.
func ReplyAnswer(kept []byte) (text string, calls []ReplyToolCall) {
	var b strings.Builder
	for line := range bytes.SplitSeq(kept, []byte("\n")) {
		var o replyObject
		if len(line) == 0 || json.Unmarshal(line, &o) != nil {
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

// ReplyText reads what ReplyAnswer does of a kept reply, as an agent's
// next call needs it: the answer text, and whether the reply asked for a
// tool call. It scans each object with ScanChunk, allocating only the
// text, where ReplyAnswer decodes each with encoding/json: about 4 µs a
// token of a streamed reply, ten times the rest of the client's work on
// it. Unlike ReplyAnswer it joins every choice's text (the engine asks
// for one) and does not name the calls.
func ReplyText(kept []byte) (text string, toolCalls bool) {
	var b []byte
	var ck Chunk
	for line := range bytes.SplitSeq(kept, []byte("\n")) {
		if len(line) == 0 || ScanChunk(line, &ck) != nil {
			continue
		}
		toolCalls = toolCalls || ck.ToolCalls
		if ck.Text != nil {
			b = appendUnescaped(b, ck.Text)
		}
	}
	return string(b), toolCalls
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
