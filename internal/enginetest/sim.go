package enginetest

import (
	"testing"

	"github.com/inferload/inferload/sim"
)

// StartSim serves the simulator with cfg on a free loopback port for the
// test's duration and returns the server and its OpenAI base URL (…/v1;
// the native APIs are at its root). The simulator's own tests cannot use
// it (sim's package would import itself): they have sim.startTiny.
func StartSim(t testing.TB, cfg sim.Config) (*sim.Server, string) {
	t.Helper()
	srv, v1, err := sim.Start(cfg, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	return srv, v1
}

// TinyProfile is the simulator's "tiny" preset: 1 ms steps, for tests.
func TinyProfile(t testing.TB) sim.Profile {
	t.Helper()
	prof, err := sim.LookupProfile("tiny")
	if err != nil {
		t.Fatal(err)
	}
	return prof
}
