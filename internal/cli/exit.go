package cli

import (
	"errors"
	"fmt"
)

// Exit codes, documented in README.md. Scripts and CI rely on them.
const (
	ExitOK = 0
	// ExitError: the run could not be set up or its results not written.
	ExitError = 1
	// ExitUsage: bad flags, plan or arguments.
	ExitUsage = 2
	// ExitInterrupted: the run was stopped by a signal; its results were
	// still written.
	ExitInterrupted = 130
)

// exitError carries an exit code to the edge of the CLI.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

func usageError(err error) error { return &exitError{code: ExitUsage, err: err} }

func usageErrorf(format string, a ...any) error { return usageError(fmt.Errorf(format, a...)) }

// exitCode maps an error returned by a command to the process exit code.
func exitCode(err error) int {
	if err == nil {
		return ExitOK
	}
	var ee *exitError
	if errors.As(err, &ee) {
		return ee.code
	}
	return ExitError
}
