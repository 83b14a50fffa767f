package protocol

import (
	"encoding/hex"
	"encoding/json"
	"math"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/inferload/inferload/record"
)

func TestScanChunkServerTimings(t *testing.T) {
	in := []byte(`{"choices":[],"usage":{"prompt_tokens":16,"completion_tokens":3,"prompt_tokens_details":{"cached_tokens":12}},` +
		`"timings":{"cache_n":12,"prompt_n":4,"prompt_ms":24.3275,"predicted_n":3,"predicted_ms":189,"queue_ms":0.0004,"prompt_per_second":657.7}}`)
	var c Chunk
	if err := ScanChunk(in, &c); err != nil {
		t.Fatal(err)
	}
	want := ServerTimings{Present: true, PromptN: 4, PromptUS: 24328, PredictedN: 3, PredictedUS: 189000, CacheN: 12, QueueUS: 0, HasQueue: true}
	if c.Timings != want {
		t.Errorf("timings %+v, want %+v", c.Timings, want)
	}
	if c.CachedTokens != 12 {
		t.Errorf("cached tokens %d, want 12", c.CachedTokens)
	}
	if err := ScanChunk([]byte(`{"choices":[],"timings":null}`), &c); err != nil || c.Timings.Present {
		t.Errorf("timings null: %+v, %v", c.Timings, err)
	}
	allocs := testing.AllocsPerRun(100, func() { _ = ScanChunk(in, &c) })
	if allocs != 0 {
		t.Errorf("%v allocations, want 0", allocs)
	}
}

func TestMsToUS(t *testing.T) {
	for in, want := range map[string]int64{
		"0": 0, "1": 1000, "24.327": 24327, "24.3275": 24328, "24.3274999": 24327,
		"0.0005": 1, "-3.5": 0, "1e3": 0, "1.5E2": 0, "999999999999": 999999999999000, "1000000000000": 0,
	} {
		if got := msToUS([]byte(in)); got != want {
			t.Errorf("msToUS(%s) = %d, want %d", in, got, want)
		}
	}
}

// FuzzMillis checks millisUS against encoding/json's float for every
// number it accepts: within a microsecond (float rounding at the half).
func FuzzMillis(f *testing.F) {
	for _, s := range []string{"24.327", "0.0005", "189.481", "7", "-1", "1e2"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var v float64
		if json.Unmarshal([]byte(s), &v) != nil {
			return
		}
		sc := scanner{b: []byte(s)}
		sc.ws()
		got, err := sc.millisUS()
		if err != nil {
			return // trailing whitespace and the like: not a bare number
		}
		if v < 0 || v >= 1e12 || got == 0 {
			return // read as 0 by rule (sign, exponent, size)
		}
		if math.Abs(float64(got)-v*1000) > 1 {
			t.Errorf("millisUS(%q) = %d, want about %f", s, got, v*1000)
		}
	})
}

func TestTraceHeadersSentPerAttempt(t *testing.T) {
	t.Parallel()
	got := make(chan [2]string, 2)
	srv := httptest.NewServer(serveTranscript([]byte("data: {\"choices\":[{\"delta\":{\"content\":\"a\"}}]}\n\ndata: [DONE]\n\n"), 0))
	wrap := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got <- [2]string{r.Header.Get("traceparent"), r.Header.Get("x-request-id")}
		srv.Config.Handler.ServeHTTP(w, r)
	}))
	defer srv.Close()
	defer wrap.Close()
	c := newClient(t, wrap.URL+"/v1", nil)
	req := chatRequest(true)
	req.TraceID = record.TraceID("run", 3)
	for attempt := range 2 {
		req.Attempt = attempt
		if tr := doTrace(t, c, req); tr.Err != record.ErrNone {
			t.Fatalf("attempt %d: %s %s", attempt, tr.Err, tr.ErrMsg)
		}
		h := <-got
		if h[0] != record.TraceParent(req.TraceID, attempt) {
			t.Errorf("attempt %d: traceparent %q, want %q", attempt, h[0], record.TraceParent(req.TraceID, attempt))
		}
		if h[1] != hex.EncodeToString(req.TraceID[:]) {
			t.Errorf("x-request-id %q", h[1])
		}
	}
	plain := chatRequest(true)
	doTrace(t, c, plain)
	if h := <-got; h != ([2]string{}) {
		t.Errorf("no trace id, yet headers %q were sent", h)
	}
}
