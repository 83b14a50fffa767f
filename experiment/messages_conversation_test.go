package experiment

import (
	"bufio"
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/inferload/inferload/internal/enginetest"
	"github.com/inferload/inferload/record"
	"github.com/inferload/inferload/sim"
)

// messagesTap sits in front of the simulator and keeps every
// /v1/messages body and the text of the reply to it, in arrival order.
type messagesTap struct {
	next http.Handler

	mu      sync.Mutex
	bodies  []string
	replies []string
}

// teeWriter copies what the simulator writes; Unwrap lets it flush.
type teeWriter struct {
	http.ResponseWriter
	out bytes.Buffer
}

func (w *teeWriter) Write(b []byte) (int, error) {
	w.out.Write(b)
	return w.ResponseWriter.Write(b)
}

func (w *teeWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func (m *messagesTap) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/v1/messages" {
		m.next.ServeHTTP(w, r)
		return
	}
	var body bytes.Buffer
	_, _ = body.ReadFrom(r.Body)
	r.Body.Close()
	r.Body = readCloser{bytes.NewReader(body.Bytes())}
	tee := &teeWriter{ResponseWriter: w}
	m.next.ServeHTTP(tee, r)
	m.mu.Lock()
	defer m.mu.Unlock()
	m.bodies = append(m.bodies, body.String())
	m.replies = append(m.replies, streamedText(tee.out.String()))
}

type readCloser struct{ *bytes.Reader }

func (readCloser) Close() error { return nil }

// streamedText joins a Messages stream's text_delta pieces: the answer
// as the client reads it.
func streamedText(stream string) string {
	var text strings.Builder
	sc := bufio.NewScanner(strings.NewReader(stream))
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		var ev struct {
			Delta struct {
				Type string `json:"type"`
				Text string `json:"text"`
			} `json:"delta"`
		}
		if json.Unmarshal([]byte(data), &ev) == nil && ev.Delta.Type == "text_delta" {
			text.WriteString(ev.Delta.Text)
		}
	}
	return text.String()
}

// anthropicTurn is one message of a Messages body, its content a string.
type anthropicTurn struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// TestMessagesConversationAgainstSim: one user's 3-turn conversation on
// --api messages against the simulator. Turn k's body is the history as
// Anthropic messages, user and assistant alternating, each assistant
// turn the server's real reply to the turn before (as the stream said
// it), then turn k's own message; the records carry turns 1, 2, 3 and
// the first turn's id as their session.
func TestMessagesConversationAgainstSim(t *testing.T) {
	t.Parallel()
	s, err := sim.New(sim.Config{Profile: enginetest.TinyProfile(t), Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	tap := &messagesTap{next: s.Handler()}
	srv := httptest.NewServer(tap)
	t.Cleanup(srv.Close)
	res := runPlan(t, `
name: messages-conversation
target: {url: `+srv.URL+`/v1, api: messages, preflight: false}
load: {concurrency: 1, requests: 3}
workload:
  classes:
    - {name: talk, weight: 1, input_tokens: "24", output_tokens: "6", turns: 3}
`)
	if len(tap.bodies) != 3 {
		t.Fatalf("%d messages requests, want 3", len(tap.bodies))
	}
	var sent [][]anthropicTurn
	for k, b := range tap.bodies {
		var v struct {
			Messages []anthropicTurn `json:"messages"`
		}
		if err := json.Unmarshal([]byte(b), &v); err != nil {
			t.Fatalf("turn %d body %s: %v", k+1, b, err)
		}
		sent = append(sent, v.Messages)
	}
	for k, msgs := range sent {
		if len(msgs) != 2*k+1 {
			t.Fatalf("turn %d sent %d messages, want %d: %+v", k+1, len(msgs), 2*k+1, msgs)
		}
		for j, m := range msgs {
			want := map[bool]string{true: "user", false: "assistant"}[j%2 == 0]
			if m.Role != want {
				t.Errorf("turn %d message %d: role %s, want %s", k+1, j, m.Role, want)
			}
			if j%2 == 1 && m.Content != tap.replies[j/2] {
				t.Errorf("turn %d message %d: %q, want the server's reply to turn %d, %q", k+1, j, m.Content, j/2+1, tap.replies[j/2])
			}
			if j < 2*k-1 && m != sent[k-1][j] {
				t.Errorf("turn %d message %d: %+v, want the history turn %d sent", k+1, j, m, k)
			}
		}
	}
	var recs []*record.Result
	eachRecord(t, res.Dir, func(r *record.Result) error {
		recs = append(recs, r)
		return nil
	})
	if len(recs) != 3 {
		t.Fatalf("%d records, want 3", len(recs))
	}
	for k, r := range recs {
		if r.Error != record.ErrNone || r.Turn != k+1 || r.Session != recs[0].ID || r.ReplyCut {
			t.Errorf("record %d: error %s turn %d session %d reply cut %v, want turn %d of session %d", k, r.Error, r.Turn, r.Session, r.ReplyCut, k+1, recs[0].ID)
		}
	}
}
