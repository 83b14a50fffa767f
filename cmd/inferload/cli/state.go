// Package cli wires inferload's subcommands: it parses flags, builds the
// library objects and prints results. It holds no logic a library user
// would want.
package cli

import (
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"

	"github.com/inferload/inferload/engine"
	"golang.org/x/term"
)

// State is the outside world a command may touch. Commands use nothing else
// from os, so tests run them in-process with their own State.
type State struct {
	Args   []string
	Stdout io.Writer
	Stderr io.Writer
	Getenv func(string) string
	// ReadFile reads the key and CA files a plan names; nil reads the
	// files themselves, bounded and stopped by a signal
	// (internal/inputfile), as the real process does.
	ReadFile func(string) ([]byte, error)
	// StderrTTY says whether progress may redraw a line in place.
	StderrTTY bool
	// Signals delivers interrupt requests (Ctrl-C, SIGTERM, SIGHUP): the
	// first stops a run gracefully, the second cancels in-flight requests.
	Signals <-chan os.Signal
	// Clock is the time runs and notes read; nil means the real one
	// (engine.PreciseClock).
	Clock engine.Clock
	// Version names the build in run directories (see version);
	// VersionLine is what --version prints, Version when empty.
	Version, VersionLine string
}

// clock is st.Clock, or the real clock.
func (st *State) clock() engine.Clock {
	if st.Clock == nil {
		return engine.PreciseClock{}
	}
	return st.Clock
}

// OSState is the State of the real process.
func OSState() *State {
	sig := make(chan os.Signal, 2)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	st := &State{
		Args:      os.Args[1:],
		Stdout:    os.Stdout,
		Stderr:    os.Stderr,
		Getenv:    os.Getenv,
		StderrTTY: term.IsTerminal(int(os.Stderr.Fd())),
		Signals:   hangupSafe(sig),
		Version:   version(),
	}
	if bi, ok := debug.ReadBuildInfo(); ok {
		st.VersionLine = versionLine(bi)
	}
	return st
}

// hangupSafe passes the signals of in on. A SIGHUP (a dropped SSH
// session) stops a run as SIGTERM does, but the terminal went with the
// session: from then on SIGPIPE is ignored, so a write to a stdout or
// stderr whose reader died (a pipe into tee) fails with EPIPE instead of
// killing the process before the run directory is complete (a terminal
// that is gone fails writes with EIO by itself). Until a SIGHUP, a broken
// pipe ends the process as usual (`inferload export --jsonl | head`).
func hangupSafe(in <-chan os.Signal) <-chan os.Signal {
	out := make(chan os.Signal, cap(in))
	go func() {
		for s := range in {
			if s == syscall.SIGHUP {
				signal.Ignore(syscall.SIGPIPE)
			}
			select {
			case out <- s:
			default: // as signal.Notify does when its channel is full
			}
		}
	}()
	return out
}
