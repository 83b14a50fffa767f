package sim

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"strconv"
	"strings"
)

// The simulated speech model, Whisper-like: its encoder reads 50 audio
// frames a second (Whisper's 1500 per 30 s window), each counted as a
// prompt token on the simulated GPU, and its decoder writes about three
// tokens a second of audio (speech at 150 words a minute). So a 20 s
// upload is a 1000-token prefill and a 60-token answer, known by
// construction; long audio is read in windows, as vLLM chunks it, so it
// is not bounded by the context.
const (
	audioFramesPerS = 50
	textTokensPerS  = 3
)

// parseTranscription translates a multipart transcription upload: the
// file (a PCM WAV), model, stream and response_format (json only).
func parseTranscription(r *http.Request, body []byte) (nativeRequest, *apiError) {
	form, aerr := readForm(r, body)
	if aerr != nil {
		return nativeRequest{}, aerr
	}
	if f := form["response_format"]; f != "" && f != "json" {
		return nativeRequest{}, badRequest("response_format", "the simulator answers response_format json only, not %q", f)
	}
	secs, err := wavSeconds([]byte(form["file"]))
	if err != nil {
		return nativeRequest{}, badRequest("file", "Invalid file format: %v", err)
	}
	out := max(1, int(secs*textTokensPerS+0.5))
	frames := max(1, int(secs*audioFramesPerS+0.5))
	stream, _ := strconv.ParseBool(form["stream"])
	req := apiRequest{Model: form["model"], Prompt: promptJSON(strings.Repeat("frame ", frames)), MaxTokens: &out,
		IgnoreEOS: true, Stream: stream}
	return nativeRequest{req: req, api: apiCompletions, batch: true, uncached: true}, nil
}

// readForm reads a multipart body's parts into a map (the last of a
// repeated name wins); the file part's value is its bytes.
func readForm(r *http.Request, body []byte) (map[string]string, *apiError) {
	mt, params, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || mt != "multipart/form-data" || params["boundary"] == "" {
		return nil, badRequest("", "Content-Type must be multipart/form-data with a boundary")
	}
	mr := multipart.NewReader(bytes.NewReader(body), params["boundary"])
	form := map[string]string{}
	for {
		p, err := mr.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, badRequest("", "malformed multipart body: %v", err)
		}
		v, err := io.ReadAll(p)
		if err != nil {
			return nil, badRequest("", "malformed multipart body: %v", err)
		}
		form[p.FormName()] = string(v)
	}
	if _, ok := form["file"]; !ok {
		return nil, badRequest("file", "file: Field required")
	}
	return form, nil
}

// wavSeconds reads a PCM WAV's length from its chunks: "fmt " for the
// rate and sample size, "data" for the samples.
func wavSeconds(b []byte) (float64, error) {
	if len(b) < 12 || string(b[:4]) != "RIFF" || string(b[8:12]) != "WAVE" {
		return 0, errors.New("not a RIFF WAVE file")
	}
	var byteRate uint32
	for rest := b[12:]; len(rest) >= 8; {
		id, size := string(rest[:4]), binary.LittleEndian.Uint32(rest[4:8])
		rest = rest[8:]
		switch {
		case id == "fmt " && len(rest) >= 16:
			if binary.LittleEndian.Uint16(rest) != 1 {
				return 0, errors.New("not PCM audio")
			}
			byteRate = binary.LittleEndian.Uint32(rest[8:])
		case id == "data":
			if byteRate == 0 {
				return 0, errors.New("data before a valid fmt chunk")
			}
			if uint64(size) > uint64(len(rest)) {
				return 0, errors.New("data chunk longer than the file")
			}
			if size == 0 {
				return 0, errors.New("no audio")
			}
			return float64(size) / float64(byteRate), nil
		}
		if uint64(size) > uint64(len(rest)) {
			break
		}
		rest = rest[size+size%2:]
	}
	return 0, errors.New("no data chunk")
}

// transcriptionDialect is OpenAI's transcription replies: a stream of
// transcript.text.delta events closed by transcript.text.done with the
// text and usage in tokens (no [DONE]), or {"text", "usage"} whole.
type transcriptionDialect struct {
	c   *call
	buf []byte
}

func newTranscriptionDialect(c *call) dialect { return &transcriptionDialect{c: c} }

func (d *transcriptionDialect) contentType() string { return "text/event-stream" }
func (d *transcriptionDialect) holdsLast() bool     { return false }
func (d *transcriptionDialect) start() []byte       { return nil }

func (d *transcriptionDialect) token(_ int, text string, broken bool) []byte {
	b := appendJSONText(append(d.buf[:0], `data: {"type":"transcript.text.delta","delta":`...), text)
	if broken {
		b = b[:len(b)-2]
	}
	d.buf = append(b, "}\n\n"...)
	return d.buf
}

func (d *transcriptionDialect) errorEvent(msg string) []byte {
	e := &apiError{typ: "server_error", code: "internal_error", msg: msg}
	return append(append([]byte(`data: {"type":"error",`), e.body()[1:]...), "\n\n"...)
}

// usage is OpenAI's token usage of a transcription of output tokens.
func (d *transcriptionDialect) usage(output int) string {
	in := d.c.g.promptTokens
	return `{"type":"tokens","input_tokens":` + strconv.Itoa(in) + `,"input_token_details":{"text_tokens":0,"audio_tokens":` +
		strconv.Itoa(in) + `},"output_tokens":` + strconv.Itoa(output) + `,"total_tokens":` + strconv.Itoa(in+output) + `}`
}

func (d *transcriptionDialect) end(sent int, _ string, marker bool) []byte {
	if !marker {
		return nil
	}
	b := appendJSONText([]byte(`data: {"type":"transcript.text.done","text":`), d.c.fullText(sent))
	return append(b, `,"usage":`+d.usage(sent)+"}\n\n"...)
}

func (d *transcriptionDialect) whole(h http.Header, text string, n int) []byte {
	h.Set("Content-Type", "application/json")
	return append(appendJSONText([]byte(`{"text":`), text), `,"usage":`+d.usage(n)+`}`...)
}

func (d *transcriptionDialect) errorBody(e *apiError) []byte { return e.body() }
