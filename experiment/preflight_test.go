package experiment

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/inferload/inferload/record"
)

// TestPreflightStopsADeadTarget: a target that refuses connections, a 404
// for the model, or a failing first request stop the run before a run
// directory exists; --no-preflight (preflight: false) runs regardless.
func TestPreflightStopsADeadTarget(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := "http://" + ln.Addr().String() + "/v1"
	ln.Close() // nothing listens there now
	noModel := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/models") {
			fmt.Fprint(w, `{"data":[{"id":"llama-3-8b"}]}`)
			return
		}
		w.WriteHeader(http.StatusNotFound)
		fmt.Fprint(w, `{"error":{"message":"The model 'gpt-9' does not exist.","code":404}}`)
	}))
	t.Cleanup(noModel.Close)
	tests := []struct {
		name, url, extra string
		kind             record.ErrorKind
		msg              string
	}{
		// Nothing listening: connection refused, said at once.
		{"refused", dead, "", record.ErrConnRefused, "connection refused"},
		// A 404 for the model names the models the target serves.
		{"unknown model", noModel.URL + "/v1", "", record.ErrHTTP4xx, `/models lists llama-3-8b`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p := testPlan(t, fmt.Sprintf("target: {url: %s, model: gpt-9}\nload: {concurrency: 2, requests: 50}\n", tt.url))
			_, err := Run(context.Background(), p, Options{})
			var pe *PreflightError
			if !errors.As(err, &pe) || pe.Kind != tt.kind || !strings.Contains(err.Error(), tt.msg) {
				t.Fatalf("err = %v, want a pre-flight %s mentioning %q", err, tt.kind, tt.msg)
			}
			if entries, _ := os.ReadDir(p.Output.Dir); len(entries) != 0 {
				t.Errorf("a run directory was written for a run that never started: %v", entries)
			}
			// With the probe off the run goes ahead and records the failures.
			p.Target.Preflight = new(bool)
			res, err := Run(context.Background(), p, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if res.Summary.Errors[string(tt.kind)] != 50 {
				t.Errorf("without pre-flight: errors %v, want 50 %s", res.Summary.Errors, tt.kind)
			}
		})
	}
}
