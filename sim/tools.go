package sim

import "strconv"

// apiTool is what the simulator reads of a chat request's tools entry.
type apiTool struct {
	Function struct {
		Name string `json:"name"`
	} `json:"function"`
}

// toolCallOf is the function a chat request's reply calls, "" for none.
// The rule is deterministic, so tests know the truth: a request that
// offers tools and carries no assistant or tool message yet (the first
// call of an agent's conversation) calls the first tool offered; once
// the conversation holds a reply or a tool's result, the model answers.
func toolCallOf(req *apiRequest, api apiKind) string {
	if api != apiChat || len(req.Tools) == 0 {
		return ""
	}
	for _, m := range req.Messages {
		if m.Role == "assistant" || m.Role == "tool" {
			return ""
		}
	}
	if name := req.Tools[0].Function.Name; name != "" {
		return name
	}
	return "tool"
}

// callTool makes the reply one tool call in one token (finish reason
// "tool_calls", no reasoning, no mid-stream fault).
func (c *call) callTool() {
	c.reasoning, c.faultAt = 0, 0
	c.st.req.OutputTokens, c.st.reason = 1, "tool_calls"
}

// toolCallJSON is the reply's tool_calls array, as OpenAI sends it both
// in a streamed delta (with the call's index) and in a whole message.
func (c *call) toolCallJSON(b []byte) []byte {
	b = append(b, `[{"index":0,"id":"call_`...)
	b = append(b, c.id...)
	b = append(b, `","type":"function","function":{"name":`...)
	b = strconv.AppendQuote(b, c.g.toolCall)
	return append(b, `,"arguments":"{\"query\":\"q\"}"}}]`...)
}

// toolCallChunk renders the streamed chunk that carries the tool call.
func (d *openaiDialect) toolCallChunk() []byte {
	b := append(d.cr.buf[:0], d.cr.head...)
	b = append(b, `{"index":0,"delta":{"tool_calls":`...)
	b = d.c.toolCallJSON(b)
	b = append(b, `},"logprobs":null,"finish_reason":null}]}`+"\n\n"...)
	d.cr.buf = b
	return b
}

// toolCallBody renders a whole reply that calls the tool.
func (d *openaiDialect) toolCallBody(u usage) []byte {
	c := d.c
	b := []byte(`{"id":` + strconv.Quote(c.id) + `,"object":"chat.completion","created":` + strconv.FormatInt(c.created, 10) + `,"model":`)
	b = append(b, c.s.modelJSON...)
	b = append(b, `,"choices":[{"index":0,"message":{"role":"assistant","content":null,"tool_calls":`...)
	b = c.toolCallJSON(b)
	b = append(b, `},"logprobs":null,"finish_reason":"tool_calls"}],"usage":`...)
	return append(u.appendJSON(b), '}')
}
