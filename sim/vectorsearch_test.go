package sim

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

// TestVectorSearch: the simulated Qdrant search answers limit passages in
// Qdrant's shape, the same ones for the same question, and refuses a bad
// body or limit as Qdrant does.
func TestVectorSearch(t *testing.T) {
	t.Parallel()
	_, root := startTiny(t, Config{Speedup: 100})
	url := root + "/collections/docs/points/search"
	post := func(body string) (int, []byte) {
		t.Helper()
		resp, err := http.Post(url, "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, b
	}
	type reply struct {
		Result []struct {
			ID      uint64
			Score   float64
			Payload struct{ Text string }
		}
		Status any
	}
	code, b := post(`{"query":"why is p99 ttft high?","limit":4}`)
	var got reply
	if err := json.Unmarshal(b, &got); err != nil || code != 200 || got.Status != "ok" || len(got.Result) != 4 {
		t.Fatalf("status %d, %d results (%v): %s", code, len(got.Result), err, b)
	}
	for k, p := range got.Result {
		if n := len(strings.Fields(p.Payload.Text)); n != searchPassageWords+2 || !strings.HasPrefix(p.Payload.Text, "[docs #") {
			t.Errorf("passage %d has %d words: %q", k, n, p.Payload.Text)
		}
		if k > 0 && p.Score >= got.Result[k-1].Score {
			t.Errorf("scores not decreasing: %v then %v", got.Result[k-1].Score, p.Score)
		}
	}
	if _, again := post(`{"query":"why is p99 ttft high?","limit":4}`); string(again[:strings.Index(string(again), `"time"`)]) !=
		string(b[:strings.Index(string(b), `"time"`)]) {
		t.Errorf("the same question retrieved other passages")
	}
	if _, def := post(`{"vector":[0.1,0.2]}`); strings.Count(string(def), `"payload"`) != searchDefaultLimit {
		t.Errorf("default limit: %s", def)
	}
	for _, bad := range []string{`{"limit":0}`, `{"limit":101}`, `not json`} {
		if code, b := post(bad); code != http.StatusBadRequest || !strings.Contains(string(b), `"error"`) {
			t.Errorf("%s: status %d %s, want 400 with Qdrant's error", bad, code, b)
		}
	}
}
