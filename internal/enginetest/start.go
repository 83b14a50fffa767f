package enginetest

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"time"
)

// start runs llama-server for c and waits, up to within, until it
// answers /health (its model loaded); on failure it is stopped and the
// error holds its log's tail.
//
// The server binds port 0 and the port is read from its log. A port
// found free by the caller and handed to the server could be taken by
// another test's server in between, and /health polled there answers
// 200 from that server: a test measured a neighbour (another slot
// count, or the simulator) and said nothing.
func start(bin, model string, c Llama, within time.Duration) (*LlamaServer, error) {
	s := &LlamaServer{Config: c, log: &syncBuffer{}}
	s.cmd = llamaCommand(bin, model, c)
	s.cmd.Stdout, s.cmd.Stderr = s.log, s.log
	if err := s.cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting llama-server: %w", err)
	}
	s.exited = make(chan error, 1)
	go func() { s.exited <- s.cmd.Wait() }()
	if err := s.waitReady(within); err != nil {
		s.Stop()
		return nil, fmt.Errorf("%w\n%s", err, s.log.tail(4000))
	}
	return s, nil
}

// errExited is a server that exited before it was ready.
var errExited = errors.New("exited before it was ready")

// waitReady waits until the server has logged the port it bound (setting
// s.URL) and answers /health with 200, it exits, or within passes.
func (s *LlamaServer) waitReady(within time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		if s.URL == "" {
			if port := boundPort(s.log.String()); port != "" {
				s.URL = "http://127.0.0.1:" + port
			}
		}
		if s.URL != "" && s.healthy(ctx) {
			return nil
		}
		select {
		case err := <-s.exited:
			s.exited <- err // Stop waits for it too
			return fmt.Errorf("%w: %v", errExited, err)
		case <-ctx.Done():
			return fmt.Errorf("not healthy after %s (url %q)", within, s.URL)
		case <-tick.C:
		}
	}
}

// healthy reports whether /health answers 200.
func (s *LlamaServer) healthy(ctx context.Context) bool {
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, s.URL+"/health", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// listening is the line llama-server (LlamaVersion) logs once it has
// bound its HTTP port, before it loads the model.
var listening = regexp.MustCompile(`HTTP server is listening, hostname: 127\.0\.0\.1, port: (\d+)`)

// boundPort is the port log says the server bound, or "" before it has.
func boundPort(log string) string {
	m := listening.FindStringSubmatch(log)
	if m == nil || m[1] == "0" {
		return ""
	}
	return m[1]
}
