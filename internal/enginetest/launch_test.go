package enginetest

import (
	"net/http"
	"os"
	"testing"
)

// TestLaunchAndStop: Launch starts a server a tool can use outside a
// test (it answers /health), and Stop ends it (its port then refuses).
func TestLaunchAndStop(t *testing.T) {
	t.Parallel()
	for _, f := range []string{LlamaBinary(), ModelPath("tiny")} {
		if _, err := os.Stat(f); err != nil {
			missing(t, "no "+f)
		}
	}
	s, err := Launch(Llama{Model: "tiny", Slots: 1})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Get(s.URL + "/health")
	if err != nil {
		s.Stop()
		t.Fatal(err)
	}
	resp.Body.Close()
	s.Stop()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("/health answered %d, want 200", resp.StatusCode)
	}
	if resp, err := http.Get(s.URL + "/health"); err == nil {
		resp.Body.Close()
		t.Errorf("the server still answers after Stop (%d)", resp.StatusCode)
	}
}
