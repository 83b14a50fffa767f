package protocol

// This file: the messages of OpenAI's function-calling protocol that an
// agent's next call sends after a tool ran: the assistant message that
// called the tool, its tool_calls as the reply had them, then one "tool"
// message per call answered, naming it by tool_call_id.

// toolCallJSON is one entry of an assistant message's tool_calls.
type toolCallJSON struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

// carriesTools reports whether the message is part of a tool exchange.
func (m ChatMessage) carriesTools() bool { return len(m.ToolCalls) > 0 || m.ToolCallID != "" }

// carriesTools reports whether some message of the body is.
func (b OpenAIBody) carriesTools() bool {
	for _, m := range b.Messages {
		if m.carriesTools() {
			return true
		}
	}
	return false
}

// marshalTools renders an assistant message with its tool_calls (content
// null when the reply had no text, as OpenAI sends it) or a tool message
// with its tool_call_id.
func (m ChatMessage) marshalTools() ([]byte, error) {
	if m.ToolCallID != "" {
		return marshalPlain(struct {
			Role       string `json:"role"`
			Content    string `json:"content"`
			ToolCallID string `json:"tool_call_id"`
		}{m.Role, m.Content, m.ToolCallID})
	}
	calls := make([]toolCallJSON, len(m.ToolCalls))
	for k, c := range m.ToolCalls {
		calls[k].ID, calls[k].Type = c.ID, "function"
		calls[k].Function.Name, calls[k].Function.Arguments = c.Name, c.Arguments
	}
	var content *string
	if m.Content != "" {
		content = &m.Content
	}
	return marshalPlain(struct {
		Role      string         `json:"role"`
		Content   *string        `json:"content"`
		ToolCalls []toolCallJSON `json:"tool_calls"`
	}{m.Role, content, calls})
}

// SendsToolMessages reports whether a body of api carries a tool
// exchange as the API's own messages (ChatMessage.ToolCalls and
// ToolCallID): OpenAI's chat, Anthropic's Messages API
// (messages_body_tools.go) and Ollama's /api/chat (ollama_tools.go).
func (a API) SendsToolMessages() bool { return a == APIChat || a == APIMessages || a == APIOllama }
