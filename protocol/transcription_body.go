package protocol

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// FormBoundary separates the parts of a transcription request's
// multipart body. It is fixed so that every request shares one header
// set; a body whose audio happened to contain it is refused when
// rendered, never sent broken.
const FormBoundary = "inferload-form-7d2f0c9b5e1a4f3b8c6d0e9a"

// formContentType is the Content-Type of a transcription request.
const formContentType = "multipart/form-data; boundary=" + FormBoundary

// renderTranscription builds a transcription request's multipart body:
// the audio as the "file" part (audio.wav), then model, stream and
// response_format "json", then Extra's fields (language, temperature,
// prompt, ...; a list repeats its field, as timestamp_granularities[]
// is sent). The text prompt is not sent: a transcription's input is its
// audio. Fields are in sorted order, so the same body renders the same.
func (b OpenAIBody) renderTranscription() ([]byte, error) {
	if len(b.Audio) == 0 {
		return nil, errors.New("render body: the transcriptions API needs audio to send (workload.audio)")
	}
	fields := map[string]any{"response_format": "json", "stream": b.Stream}
	if b.Model != "" {
		fields["model"] = b.Model
	}
	for k, v := range b.Extra {
		fields[k] = v
	}
	var out bytes.Buffer
	out.Grow(len(b.Audio) + 512)
	out.WriteString("--" + FormBoundary + "\r\nContent-Disposition: form-data; name=\"file\"; filename=\"audio.wav\"\r\n" +
		"Content-Type: audio/wav\r\n\r\n")
	out.Write(b.Audio)
	out.WriteString("\r\n")
	for _, k := range slices.Sorted(func(yield func(string) bool) {
		for k := range fields {
			if !yield(k) {
				return
			}
		}
	}) {
		if err := writeFormField(&out, k, fields[k]); err != nil {
			return nil, err
		}
	}
	out.WriteString("--" + FormBoundary + "--\r\n")
	if bytes.Count(out.Bytes(), []byte("--"+FormBoundary)) != 2+len(fields)+listExtra(fields) {
		return nil, errors.New("render body: the audio or a field holds the multipart boundary")
	}
	return out.Bytes(), nil
}

// listExtra is how many more parts than fields the lists make.
func listExtra(fields map[string]any) int {
	n := 0
	for _, v := range fields {
		if l, ok := v.([]any); ok {
			n += len(l) - 1
		}
	}
	return n
}

// writeFormField writes one form field: strings as they are, numbers and
// booleans as Go prints them, a list as one part per element, anything
// else as JSON.
func writeFormField(out *bytes.Buffer, name string, v any) error {
	if strings.ContainsAny(name, "\"\r\n") {
		return fmt.Errorf("render body: form field name %q", name)
	}
	if l, ok := v.([]any); ok {
		if len(l) == 0 {
			return fmt.Errorf("render body: form field %s is an empty list", name)
		}
		for _, e := range l {
			if err := writeFormField(out, name, e); err != nil {
				return err
			}
		}
		return nil
	}
	var text string
	switch x := v.(type) {
	case string:
		text = x
	case bool:
		text = strconv.FormatBool(x)
	case int, int64, float64, uint64:
		text = fmt.Sprint(x)
	default:
		raw, err := json.Marshal(x)
		if err != nil {
			return fmt.Errorf("render body: form field %s: %w", name, err)
		}
		text = string(raw)
	}
	out.WriteString("--" + FormBoundary + "\r\nContent-Disposition: form-data; name=\"" + name + "\"\r\n\r\n")
	out.WriteString(text)
	out.WriteString("\r\n")
	return nil
}
