package enginetest

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"time"
)

// Launch starts a llama-server with c on a free loopback port, outside a
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
	var errs []error
	for range 3 { // a port found free may be taken before the server binds it
		port, err := freePort()
		if err != nil {
			return nil, err
		}
		s := &LlamaServer{URL: "http://127.0.0.1:" + strconv.Itoa(port), Config: c, log: &syncBuffer{}}
		s.cmd = llamaCommand(bin, model, port, c)
		s.cmd.Stdout, s.cmd.Stderr = s.log, s.log
		if err := s.cmd.Start(); err != nil {
			return nil, fmt.Errorf("starting llama-server: %w", err)
		}
		s.exited = make(chan error, 1)
		go func() { s.exited <- s.cmd.Wait() }()
		err = s.waitHealthy(s.exited, 2*time.Minute)
		if err == nil {
			return s, nil
		}
		s.Stop()
		errs = append(errs, fmt.Errorf("%w\n%s", err, s.log.tail(2000)))
		if !errors.Is(err, errExited) {
			break
		}
	}
	return nil, fmt.Errorf("llama-server %+v did not start: %w", c, errors.Join(errs...))
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

// llamaCommand is the llama-server command line for c on port: the
// Prometheus /metrics and /slots endpoints on, c's threads, slots and
// context.
func llamaCommand(bin, model string, port int, c Llama) *exec.Cmd {
	return exec.Command(bin, "-m", model, "--host", "127.0.0.1", "--port", strconv.Itoa(port),
		"--metrics", "--slots", "-t", strconv.Itoa(c.Threads), "-np", strconv.Itoa(c.Slots), "-c", strconv.Itoa(c.Context))
}
