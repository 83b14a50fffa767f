package enginetest

import "testing"

// TestBoundPort: the URL comes from the port the server says it bound,
// never from one picked before it started.
func TestBoundPort(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, log, want string }{
		// b4747's line once it has bound --port 0, before the model loads.
		{"bound", "build: 4747 (x)\nmain: HTTP server is listening, hostname: 127.0.0.1, port: 43123, http threads: 3\n", "43123"},
		// Started, not bound yet: no URL to poll.
		{"not yet", "build: 4747 (x)\nsystem info: n_threads = 1\n", ""},
		// A port 0 in the line would be no port at all.
		{"zero", "main: HTTP server is listening, hostname: 127.0.0.1, port: 0, http threads: 3\n", ""},
	} {
		if got := boundPort(tc.log); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}
