package protocol

import (
	"maps"
	"strings"
)

// renderMessages builds a Messages API body: the conversation's system
// messages go to "system" (joined by blank lines), the rest to
// "messages"; a prompt alone is one user message. Anthropic requires
// max_tokens. There is no ignore_eos or stream_options. A tool exchange
// and images take Anthropic's blocks (messages_body_tools.go,
// messages_images.go).
func (b OpenAIBody) renderMessages() (map[string]any, error) {
	var system []string
	msgs := make([]ChatMessage, 0, max(len(b.Messages), 1))
	for _, m := range b.chatMessages() {
		if m.Role == "system" {
			system = append(system, m.Content)
			continue
		}
		msgs = append(msgs, m)
	}
	m := map[string]any{"messages": msgs, "stream": b.Stream}
	if b.carriesTools() || b.hasImages() {
		turns, err := messagesTurns(msgs)
		if err != nil {
			return nil, err
		}
		m["messages"] = turns
	}
	if len(system) > 0 {
		m["system"] = strings.Join(system, "\n\n")
	}
	if b.Model != "" {
		m["model"] = b.Model
	}
	if b.sendMaxTokens() {
		m["max_tokens"] = b.MaxTokens
	}
	maps.Copy(m, b.Extra)
	return m, nil
}
