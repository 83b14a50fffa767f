package enginetest

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestLaunchAndStop: a server started by Launch answers /health until
// Stop, after which its port refuses connections; a model that is not
// there is an error that says how to get one.
func TestLaunchAndStop(t *testing.T) {
	t.Parallel()
	if _, err := Launch(Llama{Model: "no-such-model"}); err == nil || !strings.Contains(err.Error(), "make engines") {
		t.Errorf("Launch of a missing model: %v, want an error naming `make engines`", err)
	}
	StartLlama(t, Llama{Model: "tiny"}) // fails or skips with the usual message when the engine is missing
	s, err := Launch(Llama{Model: "tiny"})
	if err != nil {
		t.Fatal(err)
	}
	client := &http.Client{Timeout: 10 * time.Second}
	resp, err := client.Get(s.URL + "/health")
	if err != nil {
		s.Stop()
		t.Fatal(err)
	}
	resp.Body.Close()
	s.Stop()
	s.Stop() // a second Stop does nothing
	if resp, err := client.Get(s.URL + "/health"); err == nil {
		resp.Body.Close()
		t.Errorf("%s still answers after Stop: status %d", s.URL, resp.StatusCode)
	}
}
