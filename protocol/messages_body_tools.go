package protocol

import "encoding/json"

// This file: a tool exchange as Anthropic's Messages API has it. The
// assistant turn that called tools carries its text (if any) and one
// tool_use block per call (id, name, input object); the next user turn
// carries one tool_result block per answer, naming the call by
// tool_use_id. Tools are offered as {name, description, input_schema}.

// messagesTurn is one message whose content is an array of blocks.
type messagesTurn struct {
	Role    string `json:"role"`
	Content []any  `json:"content"`
}

type toolUseBlock struct {
	Type  string          `json:"type"`
	ID    string          `json:"id"`
	Name  string          `json:"name"`
	Input json.RawMessage `json:"input"`
}

type toolResultBlock struct {
	Type      string `json:"type"`
	ToolUseID string `json:"tool_use_id"`
	Content   string `json:"content"`
}

// messagesTurns renders the conversation (system messages taken out) for
// the Messages API: a message of a tool exchange, or one with images
// (messages_images.go), becomes blocks, and the tool messages that
// follow one another (the answers to one reply's calls) go in one user
// turn, as Anthropic wants every tool_result of a turn together; the
// others render as they are.
func messagesTurns(msgs []ChatMessage) ([]any, error) {
	out := make([]any, 0, len(msgs))
	for _, m := range msgs {
		switch {
		case m.ToolCallID != "":
			result := toolResultBlock{"tool_result", m.ToolCallID, m.Content}
			if last, ok := lastResults(out); ok {
				last.Content = append(last.Content, result)
				continue
			}
			out = append(out, &messagesTurn{Role: "user", Content: []any{result}})
		case len(m.ToolCalls) > 0:
			out = append(out, toolUseTurn(m))
		case len(m.Images) > 0:
			t, err := imagesTurn(m)
			if err != nil {
				return nil, err
			}
			out = append(out, t)
		default:
			out = append(out, m)
		}
	}
	return out, nil
}

// lastResults is the last turn when it holds tool results.
func lastResults(out []any) (*messagesTurn, bool) {
	if len(out) == 0 {
		return nil, false
	}
	t, ok := out[len(out)-1].(*messagesTurn)
	if !ok || t.Role != "user" {
		return nil, false
	}
	return t, true
}

// toolUseTurn is an assistant message that called tools: its text as a
// text block (when it had any), then its calls as tool_use blocks.
func toolUseTurn(m ChatMessage) *messagesTurn {
	t := &messagesTurn{Role: m.Role, Content: make([]any, 0, len(m.ToolCalls)+1)}
	if m.Content != "" {
		t.Content = append(t.Content, textPart{"text", m.Content})
	}
	for _, c := range m.ToolCalls {
		t.Content = append(t.Content, toolUseBlock{"tool_use", c.ID, c.Name, toolInput(c.Arguments)})
	}
	return t
}

// toolInput is a call's arguments as a tool_use block's input, which
// must be a JSON object. The rule: arguments that are a JSON object are
// sent as they are; empty arguments are {}; anything else (a string, an
// array, JSON cut short) is kept, as text, in {"arguments": "..."}, so the
// request carries what the reply said and its size stays honest.
func toolInput(args string) json.RawMessage {
	var obj map[string]json.RawMessage
	switch {
	case isBlank([]byte(args)):
		return json.RawMessage("{}")
	case json.Unmarshal([]byte(args), &obj) == nil && obj != nil:
		return json.RawMessage(args)
	}
	wrapped, err := marshalPlain(map[string]string{"arguments": args})
	if err != nil {
		return json.RawMessage("{}")
	}
	return wrapped
}

// MessagesTools turns a plan's tools, OpenAI function definitions
// ({"type": "function", "function": {name, description, parameters}}),
// into the Messages API's {name, description, input_schema}; Anthropic
// requires input_schema, so a function without parameters takes an
// object schema with no properties. An entry that is not an OpenAI
// function (already in Anthropic's shape, or a server tool) is sent as
// it is.
func MessagesTools(tools []map[string]any) []map[string]any {
	out := make([]map[string]any, len(tools))
	for i, t := range tools {
		fn, ok := t["function"].(map[string]any)
		if !ok {
			out[i] = t
			continue
		}
		tool := map[string]any{"name": fn["name"], "input_schema": fn["parameters"]}
		if fn["parameters"] == nil {
			tool["input_schema"] = map[string]any{"type": "object", "properties": map[string]any{}}
		}
		if d, ok := fn["description"]; ok {
			tool["description"] = d
		}
		out[i] = tool
	}
	return out
}
