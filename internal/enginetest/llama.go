// Package enginetest starts real third-party inference servers on
// loopback for tests: llama.cpp's llama-server, built by
// scripts/install-llamacpp.sh and given a model by
// scripts/llamacpp-model.sh (`make engines` runs both; `make test` does
// too). A verdict proven only on inferload's own simulator is not
// trusted; these servers are the ones we did not write.
//
// When the engine or its model is missing, a test fails under CI=true and
// is skipped elsewhere, with the command that gets them.
package enginetest

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// LlamaVersion is the llama.cpp release the scripts build.
const LlamaVersion = "b4747"

// Llama configures one llama-server.
type Llama struct {
	// Model is "tiny" (4 layers, n_embd 256: compute-light, batches
	// poorly on one thread) or "wide" (8 layers, n_embd 1024: heavier
	// weights, batches better); default tiny.
	Model string
	// Slots is how many sequences run at once (-np); default 1.
	Slots int
	// Threads is the CPU threads (-t); default 1, so two servers fit on a
	// 2-core host and timing does not depend on the core count.
	Threads int
	// Context is the total context (-c), shared by the slots; default
	// 1024 per slot.
	Context int
}

// LlamaServer is a running llama-server.
type LlamaServer struct {
	// URL is its base URL, "http://127.0.0.1:PORT" (the OpenAI API is
	// under /v1).
	URL    string
	Config Llama
	cmd    *exec.Cmd
	log    *syncBuffer
	exited chan error // the process's exit, once
	stop   sync.Once  // Stop kills and waits once
}

// cacheDir is where the scripts put the engines and models.
func cacheDir() string {
	if d := os.Getenv("INFERLOAD_ENGINES"); d != "" {
		return d
	}
	home, _ := os.UserHomeDir()
	return filepath.Join(home, ".cache", "inferload", "engines")
}

// LlamaBinary is the llama-server the scripts build.
func LlamaBinary() string {
	return filepath.Join(cacheDir(), "llama.cpp-"+LlamaVersion, "build", "bin", "llama-server")
}

// ModelPath is the GGUF file of model name ("tiny", "wide").
func ModelPath(name string) string { return filepath.Join(cacheDir(), "models", name+".gguf") }

// missing fails (CI=true) or skips t because something the test needs
// is not on this machine.
func missing(t testing.TB, what string) {
	t.Helper()
	msg := what + ": run `make engines` (scripts/install-llamacpp.sh and scripts/llamacpp-model.sh) to build llama-server and its models"
	if os.Getenv("CI") == "true" {
		t.Fatal(msg)
	}
	t.Skip(msg)
}

// StartLlama starts a llama-server with c on a loopback port it picks, waits
// until it answers /health, and stops it when t ends.
func StartLlama(t testing.TB, c Llama) *LlamaServer {
	t.Helper()
	c = c.withDefaults()
	bin, model := LlamaBinary(), ModelPath(c.Model)
	if _, err := os.Stat(bin); err != nil {
		missing(t, "no llama-server at "+bin)
	}
	if _, err := os.Stat(model); err != nil {
		missing(t, "no model at "+model)
	}
	s, err := start(bin, model, c, 2*time.Minute)
	if err != nil {
		t.Fatalf("llama-server %+v did not start: %v", c, err)
	}
	t.Cleanup(s.Stop)
	return s
}

func (c Llama) withDefaults() Llama {
	if c.Model == "" {
		c.Model = "tiny"
	}
	if c.Slots == 0 {
		c.Slots = 1
	}
	if c.Threads == 0 {
		c.Threads = 1
	}
	if c.Context == 0 {
		c.Context = 1024 * c.Slots
	}
	return c
}

// Log is what the server printed so far.
func (s *LlamaServer) Log() string { return s.log.String() }

// syncBuffer is a bytes.Buffer the server's output can be written to
// while a test reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

func (b *syncBuffer) tail(n int) string {
	s := b.String()
	return s[max(0, len(s)-n):]
}
