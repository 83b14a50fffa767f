package protocol

import (
	"bytes"
	"io"
	"mime"
	"mime/multipart"
	"testing"
)

// transcriptionView is what the tests compare of a TranscriptionEvent.
type transcriptionView struct {
	Type                 string
	Delta, Text, Choices bool
	Usage                bool
	In, Out              int
	Error                bool
	ErrMsg               string
}

func viewTranscription(e *TranscriptionEvent) transcriptionView {
	return transcriptionView{Type: decodeJSONString(e.Type), Delta: e.Delta, Text: e.Text, Choices: e.Choices,
		Usage: e.Usage, In: e.Input, Out: e.Output, Error: e.Error, ErrMsg: decodeJSONString(e.ErrorMessage)}
}

// referenceTranscription reads data as encoding/json does, for
// FuzzTranscription.
func referenceTranscription(data []byte) (transcriptionView, bool) {
	obj, ok := referenceObject(data)
	if !ok {
		return transcriptionView{}, false
	}
	var v transcriptionView
	v.Type, _ = obj["type"].(string)
	v.Delta, v.Text = nonEmpty(obj["delta"]), nonEmpty(obj["text"])
	_, v.Choices = obj["choices"]
	if u, ok := obj["usage"].(map[string]any); ok {
		_, in := u["input_tokens"]
		_, out := u["output_tokens"]
		v.Usage = (in || out) && u["type"] != "duration"
		if v.Usage {
			v.In, v.Out = refCount(u["input_tokens"]), refCount(u["output_tokens"])
		}
	}
	v.Error, v.ErrMsg = referenceError(obj["error"])
	return v, true
}

var transcriptionScan = scanCheck[TranscriptionEvent, transcriptionView]{scan: ScanTranscription, view: viewTranscription,
	reference: referenceTranscription}

func TestScanTranscription(t *testing.T) {
	t.Parallel()
	tests := []scanCase[transcriptionView]{
		// OpenAI's delta event.
		{"delta", `{"type":"transcript.text.delta","delta":" the","logprobs":[{"token":" the","logprob":-0.1,"bytes":[32]}]}`,
			transcriptionView{Type: "transcript.text.delta", Delta: true}},
		// An empty delta is no output.
		{"empty delta", `{"type":"transcript.text.delta","delta":""}`, transcriptionView{Type: "transcript.text.delta"}},
		// The done event: the whole text and token usage.
		{"done", `{"type":"transcript.text.done","text":"I see skies of blue.","usage":{"type":"tokens","input_tokens":14,"input_token_details":{"text_tokens":0,"audio_tokens":14},"output_tokens":45,"total_tokens":59}}`,
			transcriptionView{Type: "transcript.text.done", Text: true, Usage: true, In: 14, Out: 45}},
		// whisper-1's whole reply bills seconds of audio: no token counts.
		{"duration", `{"text":"Hello.","usage":{"type":"duration","seconds":9}}`, transcriptionView{Text: true}},
		// vLLM's chunk is recognised by its choices.
		{"vllm chunk", `{"id":"trsc-1","object":"transcription.chunk","created":1,"model":"m","choices":[{"delta":{"content":" the"}}]}`,
			transcriptionView{Choices: true}},
		// An error.
		{"error", `{"error":{"message":"Invalid file format.","type":"invalid_request_error"}}`,
			transcriptionView{Error: true, ErrMsg: "Invalid file format."}},
	}
	transcriptionScan.table(t, tests)
}

// FuzzTranscription checks ScanTranscription against encoding/json.
func FuzzTranscription(f *testing.F) {
	f.Add([]byte(`{"type":"transcript.text.delta","delta":" the"}`))
	f.Add([]byte(`{"type":"transcript.text.done","text":"a","usage":{"type":"tokens","input_tokens":14,"output_tokens":45}}`))
	f.Add([]byte(`{"text":"Hello.","usage":{"type":"duration","seconds":9}}`))
	f.Add([]byte(`{"object":"transcription.chunk","choices":[{"delta":{"content":"x"}}],"usage":null}`))
	f.Add([]byte(`{"error":"boom"}`))
	transcriptionScan.fuzz(f)
}

// The multipart body: the audio as the file part, then model, stream,
// response_format and the extra fields, each readable by a standard
// multipart reader under the boundary the client's header names; no
// prompt is sent; a list repeats its field.
func TestRenderTranscription(t *testing.T) {
	t.Parallel()
	audio := []byte("RIFF\x24\x00\x00\x00WAVEfmt data")
	body, err := OpenAIBody{Model: "whisper", Prompt: "not sent", Audio: audio, Stream: true, MaxTokens: 9, IgnoreEOS: true,
		Extra: map[string]any{"language": "en", "temperature": 0.2, "timestamp_granularities[]": []any{"word", "segment"}}}.Render(APITranscriptions)
	if err != nil {
		t.Fatal(err)
	}
	_, params, err := mime.ParseMediaType(formContentType)
	if err != nil {
		t.Fatal(err)
	}
	r := multipart.NewReader(bytes.NewReader(body), params["boundary"])
	got := map[string][]string{}
	for {
		p, err := r.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("%v in %q", err, body)
		}
		b, _ := io.ReadAll(p)
		if p.FormName() == "file" {
			if p.FileName() != "audio.wav" || p.Header.Get("Content-Type") != "audio/wav" || !bytes.Equal(b, audio) {
				t.Errorf("file part %q %v: %q", p.FileName(), p.Header, b)
			}
			continue
		}
		got[p.FormName()] = append(got[p.FormName()], string(b))
	}
	want := map[string][]string{"model": {"whisper"}, "stream": {"true"}, "response_format": {"json"}, "language": {"en"},
		"temperature": {"0.2"}, "timestamp_granularities[]": {"word", "segment"}}
	if len(got) != len(want) {
		t.Errorf("fields %v, want %v", got, want)
	}
	for k, v := range want {
		if g := got[k]; len(g) != len(v) || g[0] != v[0] || g[len(g)-1] != v[len(v)-1] {
			t.Errorf("field %s = %v, want %v", k, g, v)
		}
	}
	// Audio holding the boundary would break the body: refused.
	if _, err := (OpenAIBody{Audio: []byte("x--" + FormBoundary + "x")}).Render(APITranscriptions); err == nil {
		t.Error("audio holding the boundary was rendered")
	}
	// No audio, nothing to transcribe.
	if _, err := (OpenAIBody{Prompt: "p"}).Render(APITranscriptions); err == nil {
		t.Error("a body without audio was rendered")
	}
}

// transcriptionDelta is a typical OpenAI transcription delta event.
const transcriptionDelta = "data: " + `{"type":"transcript.text.delta","delta":" blue"}` + "\n\n"

// BenchmarkTranscriptionEventPath is the transcription stream's per-token
// path: SSE parse, ScanTranscription and the fold into the trace. One op
// is one event.
func BenchmarkTranscriptionEventPath(b *testing.B) {
	fold := func(cl *call, e *TranscriptionEvent, a arrival) error {
		_, err := cl.transcriptionEvent(e, nil, a)
		return err
	}
	benchTokenPath(b, sseEvents(transcriptionDelta), ScanTranscription, func(e *TranscriptionEvent) bool { return e.Delta }, fold)
}
