package sim

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"io"
	"mime/multipart"
	"net/http"
	"strings"
	"testing"
)

// testWAV is a silent 16 kHz mono 16-bit PCM WAV of secs seconds.
func testWAV(secs int) []byte {
	data := secs * 32000
	b := make([]byte, 44+data)
	copy(b, "RIFF")
	binary.LittleEndian.PutUint32(b[4:], uint32(36+data))
	copy(b[8:], "WAVEfmt ")
	binary.LittleEndian.PutUint32(b[16:], 16)
	binary.LittleEndian.PutUint16(b[20:], 1)
	binary.LittleEndian.PutUint16(b[22:], 1)
	binary.LittleEndian.PutUint32(b[24:], 16000)
	binary.LittleEndian.PutUint32(b[28:], 32000)
	binary.LittleEndian.PutUint16(b[32:], 2)
	binary.LittleEndian.PutUint16(b[34:], 16)
	copy(b[36:], "data")
	binary.LittleEndian.PutUint32(b[40:], uint32(data))
	return b
}

// upload is a multipart transcription body of file and fields.
func upload(t *testing.T, file []byte, fields map[string]string) (*bytes.Buffer, string) {
	t.Helper()
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf)
	if file != nil {
		fw, err := w.CreateFormFile("file", "audio.wav")
		if err != nil {
			t.Fatal(err)
		}
		_, _ = fw.Write(file)
	}
	for k, v := range fields {
		_ = w.WriteField(k, v)
	}
	_ = w.Close()
	return &buf, w.FormDataContentType()
}

// The transcription route: 20 s of audio is a 1000-frame prefill and a
// 60-token transcript (50 frames and 3 tokens a second), streamed as 60
// transcript.text.delta events and a done event with that usage, or
// whole; 120 s is beyond the tiny model's 2048-token context but read in
// windows, so it is served; a file that is not a PCM WAV, a missing
// file, a body that is not multipart or another response_format is a
// 400.
func TestTranscriptionRoute(t *testing.T) {
	t.Parallel()
	srv, root := startTiny(t, Config{})
	v1 := root + "/v1"
	post := func(body io.Reader, ct string) *http.Response {
		resp, err := http.Post(v1+"/audio/transcriptions", ct, body)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { resp.Body.Close() })
		return resp
	}
	// Streamed: 60 deltas, then done with the usage.
	body, ct := upload(t, testWAV(20), map[string]string{"stream": "true", "model": srv.Profile().Model})
	resp := post(body, ct)
	deltas, done := 0, ""
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := strings.TrimPrefix(sc.Text(), "data: ")
		switch {
		case strings.Contains(line, `"transcript.text.delta"`):
			deltas++
		case strings.Contains(line, `"transcript.text.done"`):
			done = line
		}
	}
	var ev struct {
		Text  string
		Usage struct {
			In  int `json:"input_tokens"`
			Out int `json:"output_tokens"`
		} `json:"usage"`
	}
	if err := json.Unmarshal([]byte(done), &ev); err != nil || resp.StatusCode != 200 {
		t.Fatalf("status %d, done event %q: %v", resp.StatusCode, done, err)
	}
	checkUsage(t, "stream", deltas, ev.Text, ev.Usage.In, ev.Usage.Out, 1000, 60)
	// Whole, and long audio served in windows.
	for _, secs := range []int{20, 120} {
		body, ct = upload(t, testWAV(secs), map[string]string{"response_format": "json"})
		resp = post(body, ct)
		b, _ := io.ReadAll(resp.Body)
		var whole struct {
			Text  string
			Usage struct {
				In  int `json:"input_tokens"`
				Out int `json:"output_tokens"`
			}
		}
		if err := json.Unmarshal(b, &whole); err != nil || resp.StatusCode != 200 {
			t.Fatalf("%d s whole: status %d %s: %v", secs, resp.StatusCode, b, err)
		}
		checkUsage(t, "whole", 60*secs/20, whole.Text, whole.Usage.In, whole.Usage.Out, 50*secs, 3*secs)
	}
	bad := []struct {
		name  string
		file  []byte
		extra map[string]string
	}{
		{"not a wav", []byte("ID3\x03 an mp3"), nil},
		{"no file", nil, nil},
		{"empty data", testWAV(0), nil},
		{"text format", testWAV(1), map[string]string{"response_format": "text"}},
	}
	for _, tc := range bad {
		body, ct = upload(t, tc.file, tc.extra)
		if resp := post(body, ct); resp.StatusCode != 400 {
			t.Errorf("%s: status %d, want 400", tc.name, resp.StatusCode)
		}
	}
	if resp := post(strings.NewReader(`{"file":"x"}`), "application/json"); resp.StatusCode != 400 {
		t.Errorf("JSON body: status %d, want 400", resp.StatusCode)
	}
}

// checkUsage wants n words in text (one a token) and the usage given.
func checkUsage(t *testing.T, what string, n int, text string, in, out, wantIn, wantOut int) {
	t.Helper()
	if in != wantIn || out != wantOut || len(strings.Fields(text)) != wantOut || (what == "stream" && n != wantOut) {
		t.Errorf("%s: %d events, %d words, usage %d in %d out; want %d words and events, usage %d/%d",
			what, n, len(strings.Fields(text)), in, out, wantOut, wantIn, wantOut)
	}
}
