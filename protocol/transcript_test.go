package protocol

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/inferload/inferload/record"
)

// transcript is one file under testdata/streams: a header of expectations,
// a "-- stream --" line, then the response body exactly as a server sent it.
type transcript struct {
	want   transcriptWant
	eol    string
	stream []byte
	// api is the API the transcript is read as (default chat); plain is
	// true for a whole, non-streamed reply ("stream: false"); header holds
	// reply headers ("header: Name: value" lines).
	api    API
	plain  bool
	header http.Header
	// think is true when the client reads <think> tags ("think_tags: true").
	think bool
}

// transcriptWant is what the client must make of a transcript.
type transcriptWant struct {
	Content, Reasoning int
	Usage              bool
	Prompt, Completion int
	ReasoningTokens    int
	Finish             string
	Done               bool
	Err                record.ErrorKind
	// Timings is "prompt_n prompt_us predicted_n predicted_us cache_n" of
	// the server's in-band timings; empty without them.
	Timings string
	Cached  int
	// Server is "queue_us inference_us" of timings that carry a queue or
	// an undivided inference time (TGI's headers); empty otherwise.
	Server string
	// Channels is "first_reasoning first_answer interleaved" of the
	// per-channel positions (Trace.FirstReasoning, FirstAnswer,
	// Interleaved); checked only where a transcript gives it.
	Channels string
}

func loadTranscript(path string) (transcript, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return transcript{}, err
	}
	head, body, ok := bytes.Cut(raw, []byte("-- stream --\n"))
	if !ok {
		return transcript{}, fmt.Errorf("%s: no \"-- stream --\" line", path)
	}
	tr := transcript{eol: "lf", api: APIChat, header: http.Header{}}
	sc := bufio.NewScanner(bytes.NewReader(head))
	for line := 1; sc.Scan(); line++ {
		text := sc.Text()
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		key, value, _ := strings.Cut(text, ":")
		if err := tr.set(strings.TrimSpace(key), strings.TrimSpace(value)); err != nil {
			return transcript{}, fmt.Errorf("%s:%d: %w", path, line, err)
		}
	}
	switch tr.eol {
	case "lf":
	case "crlf":
		body = bytes.ReplaceAll(body, []byte("\n"), []byte("\r\n"))
	case "cr":
		body = bytes.ReplaceAll(body, []byte("\n"), []byte("\r"))
	default:
		return transcript{}, fmt.Errorf("%s: eol %q, want lf, crlf or cr", path, tr.eol)
	}
	tr.stream = body
	return tr, nil
}

// set applies one header line.
func (tr *transcript) set(key, value string) error {
	w := &tr.want
	var err error
	switch key {
	case "content":
		w.Content, err = strconv.Atoi(value)
	case "reasoning":
		w.Reasoning, err = strconv.Atoi(value)
	case "usage":
		if value == "none" {
			return nil
		}
		w.Usage = true
		_, err = fmt.Sscanf(value, "%d %d %d", &w.Prompt, &w.Completion, &w.ReasoningTokens)
	case "finish":
		w.Finish = value
	case "done":
		w.Done, err = strconv.ParseBool(value)
	case "error":
		w.Err = record.ErrorKind(value)
	case "eol":
		tr.eol = value
	case "timings":
		w.Timings = value
	case "cached":
		w.Cached, err = strconv.Atoi(value)
	case "server":
		w.Server = value
	case "channels":
		w.Channels = value
	case "api":
		tr.api = API(value)
	case "think_tags":
		tr.think, err = strconv.ParseBool(value)
	case "stream":
		var stream bool
		stream, err = strconv.ParseBool(value)
		tr.plain = !stream
	case "header":
		name, v, _ := strings.Cut(value, ":")
		tr.header.Add(strings.TrimSpace(name), strings.TrimSpace(v))
	default:
		return fmt.Errorf("unknown header %q", key)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", key, err)
	}
	return nil
}

// serveTranscript writes the stream in pieces of size bytes (all at once
// when size is 0), flushing each, so the client sees real split reads.
func serveTranscript(stream []byte, size int) http.HandlerFunc {
	return serveTranscriptAs(stream, size, "text/event-stream", nil)
}

// serveTranscriptAs is serveTranscript with a Content-Type and headers.
func serveTranscriptAs(stream []byte, size int, contentType string, header http.Header) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		for k, v := range header {
			w.Header()[k] = v
		}
		w.Header().Set("Content-Type", contentType)
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		if size == 0 {
			size = len(stream)
		}
		for rest := stream; len(rest) > 0; {
			n := min(size, len(rest))
			if _, err := w.Write(rest[:n]); err != nil {
				return
			}
			w.(http.Flusher).Flush()
			rest = rest[n:]
		}
	}
}

func TestTranscripts(t *testing.T) {
	t.Parallel()
	paths, err := filepath.Glob("testdata/streams/*.txt")
	if err != nil || len(paths) < 15 {
		t.Fatalf("found %d transcripts (%v), want at least 15", len(paths), err)
	}
	for _, path := range paths {
		tr, err := loadTranscript(path)
		if err != nil {
			t.Fatal(err)
		}
		for _, size := range []int{0, 7} {
			t.Run(fmt.Sprintf("%s/pieces=%d", filepath.Base(path), size), func(t *testing.T) {
				t.Parallel()
				srv := httptest.NewServer(serveTranscriptAs(tr.stream, size, tr.contentType(), tr.header))
				defer srv.Close()
				opts := func(o *OpenAIOptions) { withModel(o); o.ThinkTags = tr.think }
				got := doTrace(t, newClient(t, tr.baseURL(srv.URL), opts), apiRequest(tr.api, !tr.plain))
				view := transcriptWant{
					Content: got.ContentEvents, Reasoning: got.ReasoningEvents,
					Usage: got.UsageReported, Prompt: got.PromptTokens, Completion: got.CompletionTokens,
					ReasoningTokens: got.ReasoningTokens, Finish: got.FinishReason, Done: got.SawDone, Err: got.Err,
					Cached: got.CachedTokens,
				}
				if tr.want.Channels != "" {
					view.Channels = fmt.Sprintf("%d %d %v", got.FirstReasoning, got.FirstAnswer, got.Interleaved)
				}
				if tr.api == APITorchServe && !tr.plain {
					// Opaque chunks: one event per read, 1 to one per write.
					writes := 1
					if size > 0 {
						writes = (len(tr.stream) + size - 1) / size
					}
					if view.Content < 1 || view.Content > writes {
						t.Errorf("%d content events from %d writes", view.Content, writes)
					}
					view.Content = tr.want.Content
				}
				if tm := got.Timings; tm.Present {
					view.Timings = fmt.Sprintf("%d %d %d %d %d", tm.PromptN, tm.PromptUS, tm.PredictedN, tm.PredictedUS, tm.CacheN)
					if tm.InferenceUS > 0 || tm.HasQueue && tr.api.Native() {
						view.Server = fmt.Sprintf("%d %d", tm.QueueUS, tm.InferenceUS)
					}
				}
				if diff := cmp.Diff(tr.want, view); diff != "" {
					t.Errorf("(-want +got), ErrMsg %q:\n%s", got.ErrMsg, diff)
				}
				if got.BytesIn != int64(len(tr.stream)) && got.Err == record.ErrNone {
					t.Errorf("BytesIn %d, the stream has %d bytes", got.BytesIn, len(tr.stream))
				}
			})
		}
	}
}

// contentType is what a server of the transcript's API sends.
func (tr *transcript) contentType() string {
	switch {
	case tr.plain:
		return "application/json"
	case tr.api == APIOllama:
		return "application/x-ndjson"
	case tr.api == APITorchServe:
		return "text/plain"
	}
	return "text/event-stream"
}

// baseURL is the base URL the transcript's API takes on a server at root.
func (tr *transcript) baseURL(root string) string {
	if tr.api.Native() {
		return root
	}
	return root + "/v1"
}

// withModel gives a test client the model the native APIs' paths name.
func withModel(o *OpenAIOptions) { o.Model = "m" }

// apiRequest is a request for api with 16 output tokens.
func apiRequest(api API, stream bool) *Request {
	body, err := OpenAIBody{Model: "m", Prompt: "hi", MaxTokens: 16, Stream: stream, IncludeUsage: true, Audio: []byte("RIFF")}.Render(api)
	if err != nil {
		panic(err)
	}
	return &Request{API: api, Body: body, Stream: stream, MaxTokens: 16, EventsCap: 16}
}
