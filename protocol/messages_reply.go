package protocol

import (
	"bytes"
	"encoding/json"
	"strings"
)

// This file: what Request.KeepText keeps of a Messages API reply, and
// how ReplyAnswer reads its text and tool calls back. Anthropic streams a
// tool call as a content_block_start whose block is a tool_use (its id,
// name and an empty input) and input_json_delta deltas that carry the
// input's JSON in pieces, keyed by the block's index; a whole reply holds
// tool_use blocks with their input object.

// keepMessages keeps what a stream event says of the answer: a text
// delta's (or block's) text, and the objects of a tool call, the start
// of its tool_use block and each input_json_delta.
func (t *Trace) keepMessages(e *MessagesEvent, obj []byte, limit int) {
	switch string(e.Type) {
	case "content_block_start", "content_block_delta":
	default:
		return
	}
	if e.ToolUse || e.ToolInput {
		t.keepToolCall(obj, limit)
	}
	if e.Text && !e.ToolUse {
		t.keepTextPiece(e.TextRaw, limit)
	}
}

// keepMessagesBody keeps a whole reply's answer: the text of its text
// blocks, joined, and the body when a block is a tool_use. It reads the
// body a second time, once per reply.
func (t *Trace) keepMessagesBody(f *MessageFields, body []byte, limit int) {
	if f.ToolUse {
		t.keepToolCall(body, limit)
	}
	text, _ := ReplyAnswer(body)
	if text == "" {
		return
	}
	// t.Text holds raw JSON string contents: quote the joined text and
	// keep what is inside the quotes.
	quoted, err := marshalPlain(text)
	if err != nil {
		return
	}
	t.keepTextPiece(quoted[1:len(quoted)-1], limit)
}

// messagesObject is what ReplyAnswer reads of a Messages API event or
// message object.
type messagesObject struct {
	Type         string       `json:"type"`
	Index        int          `json:"index"`
	ContentBlock *replyBlock  `json:"content_block"`
	Delta        *replyDelta  `json:"delta"`
	Content      []replyBlock `json:"content"`
}

type replyBlock struct {
	Type  string          `json:"type"`
	Text  string          `json:"text"`
	ID    string          `json:"id"`
	Name  string          `json:"name"`
	Input json.RawMessage `json:"input"`
}

type replyDelta struct {
	Type        string `json:"type"`
	Text        string `json:"text"`
	PartialJSON string `json:"partial_json"`
}

// messagesAnswer joins a Messages reply's tool calls across its events:
// calls[block[i]] is the call of the tool_use block at index i; streamed
// notes the calls whose input came in deltas, which replace the start's
// empty input.
type messagesAnswer struct {
	block    map[int]int
	streamed []bool
}

// add reads o into the answer's text b and calls, reporting whether o
// was a Messages API object (else ReplyAnswer reads it as OpenAI's).
func (a *messagesAnswer) add(o *messagesObject, b *strings.Builder, calls *[]ReplyToolCall) bool {
	switch o.Type {
	case "message":
		for _, blk := range o.Content {
			a.addBlock(-1, &blk, b, calls)
		}
	case "content_block_start":
		if o.ContentBlock != nil {
			a.addBlock(o.Index, o.ContentBlock, b, calls)
		}
	case "content_block_delta":
		if o.Delta != nil {
			a.addDelta(o.Index, o.Delta, b, *calls)
		}
	default:
		return false
	}
	return true
}

// addBlock reads one content block; index is a streamed block's, -1 in
// a whole reply.
func (a *messagesAnswer) addBlock(index int, blk *replyBlock, b *strings.Builder, calls *[]ReplyToolCall) {
	switch blk.Type {
	case "text":
		b.WriteString(blk.Text)
	case "tool_use":
		*calls = append(*calls, ReplyToolCall{ID: blk.ID, Name: blk.Name, Arguments: inputArguments(blk.Input)})
		a.streamed = append(a.streamed, false)
		if index >= 0 {
			if a.block == nil {
				a.block = make(map[int]int)
			}
			a.block[index] = len(*calls) - 1
		}
	}
}

// addDelta reads one content_block_delta: text, or a piece of the input
// of the tool_use block it names (a delta for no such block is skipped).
func (a *messagesAnswer) addDelta(index int, d *replyDelta, b *strings.Builder, calls []ReplyToolCall) {
	switch d.Type {
	case "text_delta":
		b.WriteString(d.Text)
	case "input_json_delta":
		k, ok := a.block[index]
		if !ok {
			return
		}
		if !a.streamed[k] {
			calls[k].Arguments, a.streamed[k] = "", true
		}
		calls[k].Arguments += d.PartialJSON
	}
}

// inputArguments is a tool_use block's input as a call's arguments: the
// object's JSON, compacted ("{}" when absent).
func inputArguments(input json.RawMessage) string {
	var out bytes.Buffer
	if len(input) == 0 || json.Compact(&out, input) != nil {
		return "{}"
	}
	return out.String()
}
