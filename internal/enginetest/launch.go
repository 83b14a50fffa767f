package enginetest

import (
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"time"
)

// Launch starts a llama-server with c on a loopback port it picks, outside a
// test (a tool that measures real engines, such as
// internal/tools/realcalibrate), and waits until it answers /health. The
// caller stops it with Stop. Unlike StartLlama it returns what is missing
// as an error, with the command that gets it.
func Launch(c Llama) (*LlamaServer, error) {
	c = c.withDefaults()
	bin, model := LlamaBinary(), ModelPath(c.Model)
	for _, f := range []string{bin, model} {
		if _, err := os.Stat(f); err != nil {
			return nil, fmt.Errorf("%w: run `make engines` (scripts/install-llamacpp.sh and scripts/llamacpp-model.sh) to build llama-server and its models", err)
		}
	}
	return start(bin, model, c, 2*time.Minute)
}

// Stop kills a server Launch started and waits for it to exit; later
// calls (a tool stopping on a signal and again on its way out) do
// nothing.
func (s *LlamaServer) Stop() {
	s.stop.Do(func() {
		_ = s.cmd.Process.Kill()
		<-s.exited
	})
}

// llamaCommand is the llama-server command line for c: the Prometheus
// /metrics and /slots endpoints on, c's threads, slots and context, on a
// loopback port the server picks itself (start reads it from the log).
func llamaCommand(bin, model string, c Llama) *exec.Cmd {
	return exec.Command(bin, "-m", model, "--host", "127.0.0.1", "--port", "0",
		"--metrics", "--slots", "-t", strconv.Itoa(c.Threads), "-np", strconv.Itoa(c.Slots), "-c", strconv.Itoa(c.Context))
}
