package live

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestPostInflux posts line protocol to a real HTTP server standing in for
// InfluxDB.
func TestPostInflux(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		token   string
		status  int
		wantErr string
	}{
		// 204 is InfluxDB's success; the token goes in the header.
		{"accepted", "s3cret", http.StatusNoContent, ""},
		// A rejected write names the status and InfluxDB's message.
		{"rejected", "", http.StatusBadRequest, "unable to parse"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := make(chan string, 1)
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				body, _ := io.ReadAll(r.Body)
				got <- r.Header.Get("Authorization") + "|" + string(body)
				w.WriteHeader(tc.status)
				_, _ = io.WriteString(w, `{"error":"unable to parse"}`)
			}))
			defer srv.Close()
			err := PostInflux(context.Background(), srv.URL+"/api/v2/write?bucket=b", tc.token, []byte("m f=1i 1\n"))
			if tc.wantErr == "" && err != nil || tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
				t.Fatalf("error %v, want %q", err, tc.wantErr)
			}
			want := "|m f=1i 1\n"
			if tc.token != "" {
				want = "Token " + tc.token + want
			}
			if g := <-got; g != want {
				t.Errorf("server got %q, want %q", g, want)
			}
		})
	}
}
