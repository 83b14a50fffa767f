package sim

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
)

// This file: tool use on the Messages API, as Anthropic defines it. A
// request offering tools ({name, description, input_schema}) whose
// conversation holds no reply yet is answered with one tool_use block
// calling the first tool (toolCallOf, the chat API's rule); the next
// request carries that block in its assistant turn and a tool_result
// naming it by tool_use_id in the user turn after it.

// messagesTool is what the simulator reads of a Messages tools entry.
type messagesTool struct {
	Name string `json:"name"`
}

// chatTools offers the Messages request's tools as the chat API's, which
// toolCallOf reads.
func chatTools(tools []messagesTool) []apiTool {
	out := make([]apiTool, len(tools))
	for i, t := range tools {
		out[i].Function.Name = t.Name
	}
	return out
}

// checkToolResults holds a Messages conversation to Anthropic's rule:
// each tool_result block names, by tool_use_id, a tool_use block of the
// assistant turn just before it; one that does not is a 400.
func checkToolResults(msgs []apiMessage) *apiError {
	var uses []string // the tool_use ids of the turn before
	for i, m := range msgs {
		blocks := contentBlocks(m.Content)
		if m.Role == "assistant" {
			uses = uses[:0]
			for _, b := range blocks {
				if b.Type == "tool_use" {
					uses = append(uses, b.ID)
				}
			}
			continue
		}
		for k, b := range blocks {
			if b.Type == "tool_result" && !slices.Contains(uses, b.ToolUseID) {
				return badRequest(fmt.Sprintf("messages.%d.content.%d", i, k),
					"messages.%d.content.%d: unexpected `tool_use_id` found in `tool_result` blocks: %q. Each `tool_result` block must have a corresponding `tool_use` block in the previous message (%q)", i, k, b.ToolUseID, uses)
			}
		}
		uses = uses[:0]
	}
	return nil
}

// contentBlocks is a message's content when it is an array of blocks;
// nil for a string (or anything else, which addContent reports).
func contentBlocks(raw json.RawMessage) []contentPart {
	var parts []contentPart
	if json.Unmarshal(raw, &parts) != nil {
		return nil
	}
	return parts
}

// toolUseID is the id of the reply's tool_use block.
func (d *messagesDialect) toolUseID() string { return "toolu_" + d.c.shortID() }

// toolUseStart is the content_block_start of the reply's tool_use block,
// its input empty as Anthropic streams it.
func (d *messagesDialect) toolUseStart(b []byte) []byte {
	return sseTyped(b, "content_block_start", `,"index":0,"content_block":{"type":"tool_use","id":"`+d.toolUseID()+
		`","name":`+strconv.Quote(d.c.g.toolCall)+`,"input":{}}`)
}

// toolInputDelta is the one input_json_delta carrying the call's input.
func (d *messagesDialect) toolInputDelta() []byte {
	d.buf = sseTyped(d.buf[:0], "content_block_delta", `,"index":0,"delta":{"type":"input_json_delta","partial_json":"{\"query\": \"q\"}"}`)
	return d.buf
}

// toolUseBlock is the whole reply's tool_use block.
func (d *messagesDialect) toolUseBlock() []byte {
	return []byte(`{"type":"tool_use","id":"` + d.toolUseID() + `","name":` + strconv.Quote(d.c.g.toolCall) + `,"input":{"query":"q"}}`)
}
