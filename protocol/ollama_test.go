package protocol

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"github.com/google/go-cmp/cmp"
)

// ollamaView is an OllamaLine with decoded strings, comparable with cmp.
type ollamaView struct {
	Content, Reasoning, Done, Counts bool
	DoneReason                       string
	Prompt, Eval                     int
	Total, Load, PromptNS, EvalNS    int64
	Error                            bool
	ErrMsg                           string
	Text                             string
	ToolCalls                        bool
}

func viewOllama(l *OllamaLine) ollamaView {
	return ollamaView{Content: l.Content, Reasoning: l.Reasoning, Done: l.Done, Counts: l.Counts,
		DoneReason: decodeJSONString(l.DoneReason), Prompt: l.PromptEvalCount, Eval: l.EvalCount,
		Total: l.TotalNS, Load: l.LoadNS, PromptNS: l.PromptEvalNS, EvalNS: l.EvalNS,
		Error: l.Error, ErrMsg: decodeJSONString(l.ErrorMessage), Text: decodeJSONString(l.TextRaw), ToolCalls: l.ToolCalls}
}

// referenceOllama reads data as encoding/json does, for FuzzOllama.
func referenceOllama(data []byte) (ollamaView, bool) {
	obj, ok := referenceObject(data)
	if !ok {
		return ollamaView{}, false
	}
	var v ollamaView
	if m, ok := obj["message"].(map[string]any); ok {
		calls, _ := m["tool_calls"].([]any)
		v.Content = nonEmpty(m["content"]) || len(calls) > 0
		v.Reasoning = nonEmpty(m["thinking"])
		v.Text, _ = m["content"].(string)
		v.ToolCalls = len(calls) > 0
	}
	v.Content = v.Content || nonEmpty(obj["response"])
	if r, _ := obj["response"].(string); r != "" {
		v.Text = r
	}
	v.Reasoning = v.Reasoning || nonEmpty(obj["thinking"])
	v.Done = obj["done"] == true
	v.DoneReason, _ = obj["done_reason"].(string)
	_, hasP := obj["prompt_eval_count"]
	_, hasE := obj["eval_count"]
	v.Counts = hasP || hasE
	v.Prompt, v.Eval = refCount(obj["prompt_eval_count"]), refCount(obj["eval_count"])
	v.Total, v.Load = int64(refCount(obj["total_duration"])), int64(refCount(obj["load_duration"]))
	v.PromptNS, v.EvalNS = int64(refCount(obj["prompt_eval_duration"])), int64(refCount(obj["eval_duration"]))
	v.Error, v.ErrMsg = referenceError(obj["error"])
	return v, true
}

func TestScanOllama(t *testing.T) {
	t.Parallel()
	tests := []scanCase[ollamaView]{
		// A chat line with text is content.
		{"chat", `{"model":"m","message":{"role":"assistant","content":"Hi"},"done":false}`, ollamaView{Content: true, Text: "Hi"}},
		// An empty content line (Ollama opens with one at times) is not.
		{"empty", `{"model":"m","message":{"role":"assistant","content":""},"done":false}`, ollamaView{}},
		// Thinking is reasoning.
		{"thinking", `{"message":{"role":"assistant","content":"","thinking":"hmm"},"done":false}`, ollamaView{Reasoning: true}},
		// Tool calls are output.
		{"tools", `{"message":{"role":"assistant","content":"","tool_calls":[{"function":{"name":"f"}}]}}`, ollamaView{Content: true, ToolCalls: true}},
		// /api/generate's response.
		{"generate", `{"response":"x","done":false}`, ollamaView{Content: true, Text: "x"}},
		// The final object.
		{"final", `{"done":true,"done_reason":"stop","total_duration":10,"load_duration":1,"prompt_eval_count":3,"prompt_eval_duration":4,"eval_count":5,"eval_duration":6}`,
			ollamaView{Done: true, DoneReason: "stop", Counts: true, Prompt: 3, Eval: 5, Total: 10, Load: 1, PromptNS: 4, EvalNS: 6}},
		// An error.
		{"error", `{"error":"model \"x\" not found"}`, ollamaView{Error: true, ErrMsg: `model "x" not found`}},
	}
	ollamaScan.table(t, tests)
}

// FuzzOllama checks ScanOllama against encoding/json.
func FuzzOllama(f *testing.F) {
	f.Add([]byte(`{"model":"m","created_at":"2024-01-01T00:00:00Z","message":{"role":"assistant","content":"a"},"done":false}`))
	f.Add([]byte(`{"response":"","done":true,"context":[1,2],"total_duration":5,"prompt_eval_count":1,"eval_count":2,"eval_duration":3}`))
	f.Add([]byte(`{"error":"x"}`))
	f.Add([]byte(`{"model":"m","message":{"role":"assistant","content":"","tool_calls":[{"function":{"name":"get_weather","arguments":{"city":"Tokyo"}}}]},"done":false}`))
	ollamaScan.fuzz(f)
}

func TestLineReader(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, stream string
		want         []string
		err          error
	}{
		// LF and CRLF endings, blank lines skipped.
		{"endings", "a\r\n\nb\n  \nc\n", []string{"a", "b", "c"}, io.EOF},
		// A last line without its newline is still a line.
		{"unterminated", "a\nb", []string{"a", "b"}, io.EOF},
		// A line over the limit stops the reader.
		{"too long", "a\n" + strings.Repeat("x", 100) + "\nb\n", []string{"a"}, ErrEventTooLarge},
		// An unterminated line over the limit too.
		{"too long at end", "a\n" + strings.Repeat("x", 100), []string{"a"}, ErrEventTooLarge},
	}
	for _, tt := range tests {
		for _, r := range []io.Reader{strings.NewReader(tt.stream), iotest.OneByteReader(strings.NewReader(tt.stream))} {
			got, err := readLines(r, 64)
			if diff := cmp.Diff(tt.want, got); diff != "" || !errors.Is(err, tt.err) {
				t.Errorf("%s: lines (-want +got):\n%s error %v, want %v", tt.name, diff, err, tt.err)
			}
		}
	}
}

// readLines reads every line with a limit, returning the final error.
func readLines(r io.Reader, limit int) ([]string, error) {
	lr := NewLineReader(r, time.Now)
	lr.SetMaxLineSize(limit)
	var out []string
	for range 1 << 16 {
		l, err := lr.Next()
		if err != nil {
			return out, err
		}
		out = append(out, string(l.Data))
	}
	return out, errors.New("endless")
}

// FuzzNDJSON checks that any byte stream, however it is split into reads,
// gives the same lines (no panic, no endless loop, bounded lines).
func FuzzNDJSON(f *testing.F) {
	f.Add([]byte("{\"a\":1}\n{\"done\":true}\n"), uint8(3))
	f.Add([]byte("a\r\n\r\nb"), uint8(1))
	f.Fuzz(func(t *testing.T, stream []byte, split uint8) {
		whole, errWhole := readLines(bytes.NewReader(stream), 256)
		pieces, errPieces := readLines(&splitReader{b: stream, n: int(split%16) + 1}, 256)
		if diff := cmp.Diff(whole, pieces); diff != "" || !errors.Is(errPieces, errWhole) {
			t.Errorf("split every %d bytes changes the lines (-whole +split):\n%s errors %v, %v", split%16+1, diff, errWhole, errPieces)
		}
		for _, l := range whole {
			if len(l) > 256 || strings.ContainsRune(l, '\n') {
				t.Fatalf("line %q breaks the limit or holds a newline", l)
			}
		}
	})
}

var ollamaScan = scanCheck[OllamaLine, ollamaView]{scan: ScanOllama, view: viewOllama, reference: referenceOllama}
