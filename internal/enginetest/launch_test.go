package enginetest

import (
	"net/http"
	"os"
	"strings"
	"testing"
	"time"
)

// TestLaunchAndStop: a server started by Launch (for a tool, outside a
// test) answers /health until Stop, after which its port refuses
// connections, and a second Stop does nothing; a model that is not there
// is an error that says how to get one.
func TestLaunchAndStop(t *testing.T) {
	t.Parallel()
	if _, err := Launch(Llama{Model: "no-such-model"}); err == nil || !strings.Contains(err.Error(), "make engines") {
		t.Errorf("Launch of a missing model: %v, want an error naming `make engines`", err)
	}
	for _, f := range []string{LlamaBinary(), ModelPath("tiny")} {
		if _, err := os.Stat(f); err != nil {
			missing(t, "no "+f)
		}
	}
	s, err := Launch(Llama{Model: "tiny", Slots: 1})
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
	if resp.StatusCode != http.StatusOK {
		t.Errorf("/health answered %d, want 200", resp.StatusCode)
	}
	s.Stop()
	s.Stop() // a second Stop does nothing
	if resp, err := client.Get(s.URL + "/health"); err == nil {
		resp.Body.Close()
		t.Errorf("%s still answers after Stop: status %d", s.URL, resp.StatusCode)
	}
}
