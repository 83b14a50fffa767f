package sim

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"time"
)

// ollamaRequest is the part of an Ollama /api/chat or /api/generate body
// the simulator honours.
type ollamaRequest struct {
	Model    string          `json:"model"`
	Messages []ollamaMessage `json:"messages"`
	Tools    []apiTool       `json:"tools"`
	Prompt   *string         `json:"prompt"`
	Stream   *bool           `json:"stream"`
	Options  struct {
		NumPredict *int `json:"num_predict"`
	} `json:"options"`
}

// parseOllama translates an /api/chat (chat true) or /api/generate body.
// Ollama streams unless told "stream": false, and num_predict of 0 or
// below (-1 endless, -2 fill the context) runs to the context's end here.
func parseOllama(chat bool) func(*http.Request, []byte) (nativeRequest, *apiError) {
	return func(_ *http.Request, body []byte) (nativeRequest, *apiError) {
		var o ollamaRequest
		if err := json.Unmarshal(body, &o); err != nil {
			return nativeRequest{}, badRequest("", "invalid character in request body: %v", err)
		}
		if o.Model == "" {
			return nativeRequest{}, badRequest("model", "model is required")
		}
		req := apiRequest{Model: o.Model, Stream: o.Stream == nil || *o.Stream}
		if n := o.Options.NumPredict; n != nil && *n > 0 {
			req.MaxTokens = n
		}
		if chat {
			req.Messages, req.Tools = ollamaChatMessages(o.Messages), o.Tools
			if aerr := checkToolMessages(req.Messages, "tool_name"); aerr != nil {
				return nativeRequest{}, aerr
			}
			return nativeRequest{req: req, api: apiChat}, nil
		}
		if o.Prompt == nil {
			return nativeRequest{}, badRequest("prompt", "prompt is required")
		}
		req.Prompt = promptJSON(*o.Prompt)
		return nativeRequest{req: req, api: apiCompletions}, nil
	}
}

// ollamaDialect is Ollama's native replies: one JSON object a line, the
// last with done: true and the engine's exact counts and durations.
type ollamaDialect struct {
	c    *call
	chat bool
	head []byte // `{"model":…,"created_at":…,`
	buf  []byte
}

func newOllamaDialect(chat bool) func(c *call) dialect {
	return func(c *call) dialect {
		head := fmt.Appendf(nil, `{"model":%s,"created_at":%q,`, c.s.modelJSON, time.Now().UTC().Format(time.RFC3339Nano))
		return &ollamaDialect{c: c, chat: chat, head: head, buf: make([]byte, 0, 256)}
	}
}

func (d *ollamaDialect) contentType() string { return "application/x-ndjson" }
func (d *ollamaDialect) holdsLast() bool     { return false }
func (d *ollamaDialect) start() []byte       { return nil }

// appendText renders the text member: message.content or response.
func (d *ollamaDialect) appendText(b []byte, text string) []byte {
	if d.chat {
		b = append(b, `"message":{"role":"assistant","content":`...)
		return append(appendJSONText(b, text), '}')
	}
	return appendJSONText(append(b, `"response":`...), text)
}

func (d *ollamaDialect) token(_ int, text string, broken bool) []byte {
	if d.chat && d.c.callsTool() {
		d.buf = append(d.appendToolCalls(append(d.buf[:0], d.head...)), `,"done":false}`+"\n"...)
		return d.buf
	}
	b := d.appendText(append(d.buf[:0], d.head...), text)
	if broken {
		b = b[:len(b)-3]
	} else {
		b = append(b, `,"done":false}`...)
	}
	d.buf = append(b, '\n')
	return d.buf
}

func (d *ollamaDialect) errorEvent(msg string) []byte {
	return append(appendJSONText([]byte(`{"error":`), msg), "}\n"...)
}

// final renders the done object: the engine's counts and durations; a
// whole reply's carries the tool call (calls is true), with done_reason
// stop, as Ollama ends a reply that calls a tool.
func (d *ollamaDialect) final(text string, n int, calls bool) []byte {
	c := d.c
	t := c.st.times
	b := append([]byte(nil), d.head...)
	if calls {
		b = d.appendToolCalls(b)
	} else {
		b = d.appendText(b, text)
	}
	reason := c.st.reason
	if reason == "tool_calls" {
		reason = "stop"
	}
	b = append(append(append(b, `,"done_reason":"`...), reason...), `","done":true`...)
	b = strconv.AppendInt(append(b, `,"total_duration":`...), int64(t.queue+t.prefill+t.decode), 10)
	b = append(b, `,"load_duration":0`...)
	b = strconv.AppendInt(append(b, `,"prompt_eval_count":`...), int64(c.g.promptTokens), 10)
	b = strconv.AppendInt(append(b, `,"prompt_eval_duration":`...), int64(t.prefill), 10)
	b = strconv.AppendInt(append(b, `,"eval_count":`...), int64(n), 10)
	b = strconv.AppendInt(append(b, `,"eval_duration":`...), int64(t.decode), 10)
	return append(b, '}')
}

func (d *ollamaDialect) end(sent int, _ string, marker bool) []byte {
	if !marker {
		return nil
	}
	return append(d.final("", sent, false), '\n')
}

func (d *ollamaDialect) whole(h http.Header, text string, n int) []byte {
	h.Set("Content-Type", "application/json; charset=utf-8")
	return d.final(text, n, d.chat && d.c.callsTool())
}

// errorBody is Ollama's {"error": "..."}.
func (d *ollamaDialect) errorBody(e *apiError) []byte {
	return append(appendJSONText([]byte(`{"error":`), e.msg), '}')
}

// ollamaVersion answers GET /api/version.
func (s *Server) ollamaVersion(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	_, _ = fmt.Fprintf(w, `{"version":%q}`, Version)
}

// ollamaTags answers GET /api/tags: the one model.
func (s *Server) ollamaTags(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	_, _ = fmt.Fprintf(w, `{"models":[{"name":%s,"model":%s,"modified_at":%q,"size":0,"digest":"","details":{"format":"gguf","family":"sim","parameter_size":"","quantization_level":""}}]}`,
		s.modelJSON, s.modelJSON, s.epoch.UTC().Format(time.RFC3339))
}

// ollamaShow answers POST /api/show with the model's context length.
func (s *Server) ollamaShow(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	_, _ = fmt.Fprintf(w, `{"details":{"format":"gguf","family":"sim"},"model_info":{"general.architecture":"sim","sim.context_length":%d}}`,
		s.prof.MaxModelLen)
}
