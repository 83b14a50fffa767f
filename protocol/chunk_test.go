package protocol

import (
	"encoding/json"
	"errors"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// chunkView is a comparable summary of a Chunk.
type chunkView struct {
	Content, Reasoning bool
	Finish             string
	Usage              bool
	Prompt, Completion int
	ReasoningTokens    int
	Error              bool
	ErrMsg             string
	// Text is Chunk.Text decoded: the last non-empty answer string.
	Text string
}

func viewOf(c *Chunk) chunkView {
	return chunkView{
		Content: c.Content, Reasoning: c.Reasoning, Finish: decodeJSONString(c.FinishReason),
		Usage: c.Usage, Prompt: c.PromptTokens, Completion: c.CompletionTokens,
		ReasoningTokens: c.ReasoningTokens, Error: c.Error, ErrMsg: decodeJSONString(c.ErrorMessage),
		Text: decodeJSONString(c.Text),
	}
}

func TestScanChunk(t *testing.T) {
	t.Parallel()
	tests := []scanCase[chunkView]{
		// A role-only first chunk (vLLM: content "") is not content.
		{"role only empty", `{"choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}`, chunkView{}},
		// A role-only first chunk (llama.cpp: content null) is not content.
		{"role only null", `{"choices":[{"delta":{"role":"assistant","content":null},"index":0}]}`, chunkView{}},
		// A usage-only chunk has no content and reports usage.
		{"usage only", `{"choices":[],"usage":{"prompt_tokens":11,"completion_tokens":8,"total_tokens":19}}`,
			chunkView{Usage: true, Prompt: 11, Completion: 8}},
		// usage: null is no usage.
		{"usage null", `{"usage":null,"choices":[{"delta":{"content":"x"}}]}`, chunkView{Text: "x", Content: true}},
		// A token chunk is content.
		{"content", `{"choices":[{"delta":{"content":" the"},"finish_reason":null}]}`, chunkView{Text: " the", Content: true}},
		// Completions API: a non-empty text is content.
		{"completions text", `{"object":"text_completion","choices":[{"text":" Paris","index":0,"finish_reason":null}]}`,
			chunkView{Text: " Paris", Content: true}},
		// Completions API: an empty text with a finish reason is not.
		{"completions finish", `{"choices":[{"text":"","finish_reason":"length"}]}`, chunkView{Finish: "length"}},
		// reasoning_content (vLLM, SGLang, DeepSeek) is reasoning, not content.
		{"reasoning_content", `{"choices":[{"delta":{"reasoning_content":"Let me think","content":null}}]}`,
			chunkView{Reasoning: true}},
		// reasoning (newer vLLM, Ollama, OpenRouter) is reasoning too.
		{"reasoning", `{"choices":[{"delta":{"reasoning":"hmm"}}]}`, chunkView{Reasoning: true}},
		// Reasoning tokens in usage details.
		{"reasoning tokens", `{"choices":[],"usage":{"prompt_tokens":5,"completion_tokens":30,` +
			`"completion_tokens_details":{"reasoning_tokens":22}}}`,
			chunkView{Usage: true, Prompt: 5, Completion: 30, ReasoningTokens: 22}},
		// Tool-call deltas are generated output.
		{"tool calls", `{"choices":[{"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\""}}]}}]}`,
			chunkView{Content: true}},
		// An empty tool_calls array or null (SGLang) is not.
		{"tool calls empty", `{"choices":[{"delta":{"tool_calls":[ ],"content":null,"reasoning_content":null}}]}`, chunkView{}},
		// Non-streaming reply: message is read like delta.
		{"message", `{"choices":[{"message":{"role":"assistant","content":"Hi"},"finish_reason":"stop"}],` +
			`"usage":{"prompt_tokens":3,"completion_tokens":1}}`,
			chunkView{Text: "Hi", Content: true, Finish: "stop", Usage: true, Prompt: 3, Completion: 1}},
		// Error object with message (OpenAI, vLLM, Ollama).
		{"error object", `{"error": {"object": "error", "message": "out of memory", "code": 500}}`,
			chunkView{Error: true, ErrMsg: "out of memory"}},
		// Error string (TGI).
		{"error string", `{"error":"Input validation error","error_type":"validation"}`,
			chunkView{Error: true, ErrMsg: "Input validation error"}},
		// vLLM's older top-level error object.
		{"object error", `{"object":"error","message":"bad \"request\"","type":"BadRequestError","code":400}`,
			chunkView{Error: true, ErrMsg: `bad "request"`}},
		// "error": null is not an error.
		{"error null", `{"error":null,"choices":[{"delta":{"content":"a"}}]}`, chunkView{Text: "a", Content: true}},
		// Escapes in strings and keys are handled; an escaped key still matches.
		{"escapes", `{"ch\u006fices":[{"delta":{"content":"\"\\\/\b\f\n\r\t\u00e9\ud83d\ude00"}}],"id":"\\"}`,
			chunkView{Text: "\"\\/\b\f\n\r\té😀", Content: true}},
		// Nested unknown values of every type are skipped.
		{"skips", `{"x":{"a":[1,-2.5e+3,true,false,null,{"b":[]},"s"]},"choices":[{"logprobs":{"content":[{"token":"a","logprob":-0.1}]},"delta":{"content":"a"}}]}`,
			chunkView{Text: "a", Content: true}},
		// Whitespace everywhere (Python's json.dumps style and more).
		{"whitespace", " {\n\t\"choices\" : [ { \"delta\" : { \"content\" : \"a\" } , \"finish_reason\" : \"stop\" } ] } \r\n",
			chunkView{Text: "a", Content: true, Finish: "stop"}},
		// Several choices: any content counts, the last finish reason wins.
		{"n=2", `{"choices":[{"delta":{"content":"a"},"finish_reason":"stop"},{"delta":{"content":""},"finish_reason":"length"}]}`,
			chunkView{Text: "a", Content: true, Finish: "length"}},
		// Duplicate keys: the last one wins, as in encoding/json.
		{"duplicate", `{"choices":[{"delta":{"content":"a","content":""}}],"usage":{"prompt_tokens":1},"usage":null}`, chunkView{}},
		// A fractional or huge token count is not a count.
		{"odd numbers", `{"usage":{"prompt_tokens":1.5,"completion_tokens":12345678901234567890}}`, chunkView{Usage: true}},
		// Unexpected types for known keys are skipped, not errors.
		{"odd types", `{"choices":{"a":1},"usage":"none","error":false}`, chunkView{}},
	}
	chunkScan.table(t, tests)
	// Each row's view is also what encoding/json reads.
	for _, tc := range tests {
		var c Chunk
		if ScanChunk([]byte(tc.data), &c) != nil {
			continue // reported by table
		}
		if ref, ok := referenceChunk([]byte(tc.data)); !ok || ref != viewOf(&c) {
			t.Errorf("%s: encoding/json reference says %+v (valid %v)", tc.name, ref, ok)
		}
	}
}

func TestScanChunkRejectsMalformed(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, in string }{
		{"empty", ``},                                  // nothing at all
		{"not an object", `[1,2]`},                     // chunks are objects
		{"string", `"data"`},                           // chunks are objects
		{"truncated", `{"choices":[{"delta":{"con`},    // a stream cut mid-chunk
		{"unterminated string", `{"a":"abc}`},          // no closing quote
		{"bad escape", `{"a":"\x"}`},                   // \x is not JSON
		{"short unicode", `{"a":"\u12"}`},              // \u needs four hex digits
		{"bad unicode", `{"a":"\u12g4"}`},              // g is not hex
		{"trailing comma", `{"a":1,}`},                 // JSON has no trailing commas
		{"missing colon", `{"a" 1}`},                   // key without colon
		{"missing comma", `{"a":1 "b":2}`},             // members need commas
		{"unquoted key", `{a:1}`},                      // keys are strings
		{"bad literal", `{"a":nul}`},                   // truncated null
		{"bad number", `{"a":-}`},                      // sign without digits
		{"leading zero", `{"a":01}`},                   // JSON forbids leading zeros
		{"bad fraction", `{"a":1.}`},                   // fraction needs digits
		{"bad exponent", `{"a":1e}`},                   // exponent needs digits
		{"trailing data", `{"a":1}{"b":2}`},            // two objects in one event
		{"unclosed array", `{"choices":[{"text":"a"}`}, // array never closed
		{"bare value", `{"a":}`},                       // missing value
		{"array junk", `{"a":[1 2]}`},                  // elements need commas
	}
	for _, tc := range tests {
		var c Chunk
		err := ScanChunk([]byte(tc.in), &c)
		var se *SyntaxError
		if !errors.As(err, &se) {
			t.Errorf("%s: error %v, want a *SyntaxError", tc.name, err)
		}
		if json.Valid([]byte(tc.in)) && strings.HasPrefix(tc.in, "{") {
			t.Errorf("%s: the input is valid JSON; the row proves nothing", tc.name)
		}
	}
}

func TestScanChunkDepthIsBounded(t *testing.T) {
	t.Parallel()
	deep := `{"a":` + strings.Repeat("[", maxDepth+1) + strings.Repeat("]", maxDepth+1) + `}`
	var c Chunk
	if err := ScanChunk([]byte(deep), &c); err == nil {
		t.Errorf("nesting deeper than %d accepted", maxDepth)
	}
	ok := `{"a":` + strings.Repeat("[", maxDepth-1) + strings.Repeat("]", maxDepth-1) + `}`
	if err := ScanChunk([]byte(ok), &c); err != nil {
		t.Errorf("nesting of %d rejected: %v", maxDepth, err)
	}
}

func TestScanChunkAllocatesNothing(t *testing.T) {
	inputs := [][]byte{
		[]byte(strings.TrimSuffix(strings.TrimPrefix(vllmChunk, "data: "), "\n\n")),
		[]byte(`{"ch\u006fices":[{"delta":{"reasoning_content":"\u00e9"}}],"usage":{"prompt_tokens":1,"completion_tokens_details":{"reasoning_tokens":2}}}`),
		[]byte(`{"error":{"message":"x"}}`),
	}
	for _, in := range inputs {
		var c Chunk
		allocs := testing.AllocsPerRun(200, func() {
			if err := ScanChunk(in, &c); err != nil {
				t.Fatal(err)
			}
		})
		if allocs != 0 {
			t.Errorf("%s: %v allocations, want 0", in, allocs)
		}
	}
}

// plainCount is what a token count looks like to ScanChunk.
var plainCount = regexp.MustCompile(`^[0-9]{1,15}$`)

// referenceChunk computes with encoding/json what ScanChunk must report.
// ok is false when data is not a valid JSON object.
func referenceChunk(data []byte) (chunkView, bool) {
	obj, ok := referenceObject(data)
	if !ok {
		return chunkView{}, false
	}
	var v chunkView
	if choices, ok := obj["choices"].([]any); ok {
		for _, ch := range choices {
			refChoice(ch, &v)
		}
	}
	if u, ok := obj["usage"].(map[string]any); ok {
		v.Usage = true
		v.Prompt, v.Completion = refCount(u["prompt_tokens"]), refCount(u["completion_tokens"])
		if d, ok := u["completion_tokens_details"].(map[string]any); ok {
			v.ReasoningTokens = refCount(d["reasoning_tokens"])
		}
	}
	v.Error, v.ErrMsg = referenceError(obj["error"])
	if !v.Error && obj["object"] == "error" {
		v.Error = true
		v.ErrMsg, _ = obj["message"].(string)
	}
	return v, true
}

func refChoice(ch any, v *chunkView) {
	c, ok := ch.(map[string]any)
	if !ok {
		return
	}
	for _, key := range []string{"delta", "message"} {
		p, ok := c[key].(map[string]any)
		if !ok {
			continue
		}
		tools, _ := p["tool_calls"].([]any)
		v.Content = v.Content || nonEmpty(p["content"]) || len(tools) > 0
		if nonEmpty(p["content"]) {
			v.Text = p["content"].(string)
		}
		v.Reasoning = v.Reasoning || nonEmpty(p["reasoning_content"]) || nonEmpty(p["reasoning"])
	}
	v.Content = v.Content || nonEmpty(c["text"])
	if nonEmpty(c["text"]) {
		v.Text = c["text"].(string)
	}
	if f, ok := c["finish_reason"].(string); ok {
		v.Finish = f
	}
}

func nonEmpty(v any) bool {
	s, ok := v.(string)
	return ok && s != ""
}

func refCount(v any) int {
	n, ok := v.(json.Number)
	if !ok || !plainCount.MatchString(string(n)) {
		return 0
	}
	i, _ := strconv.Atoi(string(n))
	return i
}

var chunkScan = scanCheck[Chunk, chunkView]{scan: ScanChunk, view: viewOf, reference: referenceChunk}
