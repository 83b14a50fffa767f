package engine

import (
	"os"
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package when a goroutine outlives the tests: Run must
// join everything it starts. Run as BenchmarkConcurrentStreams10k's child
// (holdServerEnv), the binary serves instead.
func TestMain(m *testing.M) {
	if os.Getenv(holdServerEnv) != "" {
		serveHolding()
		return
	}
	if os.Getenv(scaleServerEnv) != "" {
		serveScale()
		return
	}
	if url := os.Getenv(scaleProbeEnv); url != "" {
		probe(url)
		return
	}
	goleak.VerifyTestMain(m)
}
