package protocol

import "maps"

// renderResponses builds a Responses API body: input is the prompt as one
// string, or the conversation as message items ({"role", "content"}, the
// chat API's messages); max_output_tokens bounds the output. With
// PreviousResponseID the server holds the history: only the messages
// after the conversation's last assistant turn (the new user message)
// are sent, with the id. Responses has no ignore_eos or stream_options:
// neither is sent.
func (b OpenAIBody) renderResponses() map[string]any {
	m := map[string]any{"stream": b.Stream}
	switch {
	case len(b.Messages) == 0:
		m["input"] = b.Prompt
	case b.PreviousResponseID != "":
		m["input"] = newTurn(b.Messages)
		m["previous_response_id"] = b.PreviousResponseID
	default:
		m["input"] = b.Messages
	}
	if b.Model != "" {
		m["model"] = b.Model
	}
	if b.sendMaxTokens() {
		m["max_output_tokens"] = b.MaxTokens
	}
	maps.Copy(m, b.Extra)
	return m
}

// newTurn is what follows a conversation's last assistant message: the
// turn a server holding the history has not seen.
func newTurn(msgs []ChatMessage) []ChatMessage {
	for k := len(msgs) - 1; k >= 0; k-- {
		if msgs[k].Role == "assistant" {
			return msgs[k+1:]
		}
	}
	return msgs
}
