package enginetest

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"time"
)

// Launch starts a llama-server with c on a free loopback port and waits
// until it answers /health, as StartLlama does, for a program rather
// than a test (internal/tools/realknee): the caller stops it with Stop.
// A missing engine or model is an error naming the command that gets it.
func Launch(c Llama) (*LlamaServer, error) {
	c = c.withDefaults()
	bin, model := LlamaBinary(), ModelPath(c.Model)
	for _, path := range []string{bin, model} {
		if _, err := os.Stat(path); err != nil {
			return nil, fmt.Errorf("%w: run `make engines` (for the wide model: MODELS=\"tiny wide\" ./scripts/llamacpp-model.sh)", err)
		}
	}
	// A port found free may be taken before the server binds it: a server
	// that exits at once is started again on another.
	var errs []error
	for range 3 {
		s, err := launchOnce(bin, model, c)
		if err == nil {
			return s, nil
		}
		if errs = append(errs, err); !errors.Is(err, errExited) {
			break
		}
	}
	return nil, fmt.Errorf("llama-server %+v did not start: %w", c, errors.Join(errs...))
}

// Stop kills a server started by Launch and waits for it to exit.
func (s *LlamaServer) Stop() {
	if s.stopped != nil {
		_ = s.cmd.Process.Kill()
		<-s.stopped
		s.stopped = nil
	}
}

// launchOnce starts one server and waits for it: an error when it exits
// first or is not healthy in time, its log's tail in the error.
func launchOnce(bin, model string, c Llama) (*LlamaServer, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	s := &LlamaServer{URL: "http://127.0.0.1:" + strconv.Itoa(port), Config: c, log: &syncBuffer{}}
	s.cmd = exec.Command(bin, "-m", model, "--host", "127.0.0.1", "--port", strconv.Itoa(port),
		"--metrics", "--slots", "-t", strconv.Itoa(c.Threads), "-np", strconv.Itoa(c.Slots), "-c", strconv.Itoa(c.Context))
	s.cmd.Stdout, s.cmd.Stderr = s.log, s.log
	if err := s.cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting llama-server: %w", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- s.cmd.Wait() }()
	if err := s.waitHealthy(exited, 2*time.Minute); err != nil {
		if !errors.Is(err, errExited) {
			_ = s.cmd.Process.Kill()
			<-exited
		}
		return nil, fmt.Errorf("%w\n%s", err, s.log.tail(2000))
	}
	done := make(chan struct{})
	go func() { <-exited; close(done) }()
	s.stopped = done
	return s, nil
}
