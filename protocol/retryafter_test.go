package protocol

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// TestRetryAfter covers both header forms and every way a value is no hint.
func TestRetryAfter(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	tests := []struct {
		name, in string
		want     time.Duration
	}{
		// delay-seconds, the common form.
		{"seconds", "3", 3 * time.Second},
		// Surrounding whitespace is tolerated.
		{"spaces", "  7 ", 7 * time.Second},
		// An HTTP date ten seconds ahead.
		{"date", now.Add(10 * time.Second).Format(http.TimeFormat), 10 * time.Second},
		// A date in the past means retry now: no wait.
		{"past date", now.Add(-time.Minute).Format(http.TimeFormat), 0},
		// Zero and negative seconds are no wait.
		{"zero", "0", 0},
		{"negative", "-5", 0},
		// Garbage is no hint rather than an error.
		{"garbage", "soon", 0},
		// Absent header.
		{"empty", "", 0},
		// An absurd value is capped instead of overflowing.
		{"huge", "99999999999999999", maxRetryAfter},
	}
	for _, tt := range tests {
		if got := RetryAfter(tt.in, now); got != tt.want {
			t.Errorf("%s: RetryAfter(%q) = %v, want %v", tt.name, tt.in, got, tt.want)
		}
	}
}

// TestTraceRetryAfter: the client fills Trace.RetryAfter from 429 and 503
// replies only.
func TestTraceRetryAfter(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		status int
		want   time.Duration
	}{
		// Rate limited: the hint is kept.
		{"429", http.StatusTooManyRequests, 2 * time.Second},
		// Overloaded: the hint is kept.
		{"503", http.StatusServiceUnavailable, 2 * time.Second},
		// Any other error reply ignores the header.
		{"500", http.StatusInternalServerError, 0},
	}
	for _, tt := range tests {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Retry-After", "2")
			w.WriteHeader(tt.status)
		}))
		c, err := NewOpenAI(OpenAIOptions{BaseURL: srv.URL + "/v1"})
		if err != nil {
			t.Fatal(err)
		}
		var tr Trace
		c.Do(context.Background(), &Request{API: APIChat, Body: []byte(`{}`)}, &tr)
		srv.Close()
		if tr.Status != tt.status || tr.RetryAfter != tt.want {
			t.Errorf("%s: status %d RetryAfter %v, want %d %v", tt.name, tr.Status, tr.RetryAfter, tt.status, tt.want)
		}
	}
}
