package cli

import (
	"errors"
	"fmt"
	"strings"

	"github.com/inferload/inferload/analyze"
	"github.com/inferload/inferload/experiment"
	"github.com/inferload/inferload/record"
	"github.com/inferload/inferload/summary"
)

// Exit codes, documented in README.md. Scripts and CI rely on them.
const (
	ExitOK = 0
	// ExitError: the run could not be set up or its results not written.
	ExitError = 1
	// ExitUsage: bad flags, plan or arguments.
	ExitUsage = 2
	// ExitThresholds: the run finished and was written, but at least one
	// of its thresholds failed (or named no summary figure).
	ExitThresholds = 99
	// ExitRegression: `inferload compare` found a figure significantly
	// worse than the baseline, beyond its regression limit.
	ExitRegression = 98
	// ExitNotValid: the run is NOT VALID, so its gate proves nothing: its
	// thresholds passed on figures that cannot be trusted. allow_invalid
	// (--allow-invalid) lets the thresholds decide alone.
	ExitNotValid = 97
	// ExitRecordsLost: records are missing from the run directory. From
	// `run`: its files stopped being written (a full disk), issuing
	// stopped at once and the summary printed is from memory. From
	// `report` and `export`: the run was killed, its disk filled, or its
	// records file is cut or damaged; every record left was used and the
	// message says what is missing.
	ExitRecordsLost = 3
	// ExitInterrupted: the run was stopped by a signal; its results were
	// still written.
	ExitInterrupted = 130
)

// thresholdsVerdict is the gate of a finished run: thresholdsFailed, and
// when every threshold passed, notValidVerdict.
func thresholdsVerdict(s *record.Summary) error {
	if err := thresholdsFailed(s); err != nil {
		return err
	}
	return notValidVerdict(s)
}

// thresholdsFailed is nil when every threshold of s passed, and otherwise
// the error that exits with ExitThresholds. It names the failed ones (the
// first few, with the figure or the reason), so a quiet CI log says which
// gate broke without the table.
func thresholdsFailed(s *record.Summary) error {
	failed := analyze.Failed(s.Thresholds)
	if failed == 0 {
		return nil
	}
	const named = 3
	var which []string
	for _, t := range s.Thresholds {
		switch {
		case t.Passed || len(which) == named:
		case t.Error != "":
			which = append(which, fmt.Sprintf("%s (%s)", t.Expr, t.Error))
		default:
			which = append(which, fmt.Sprintf("%s (%s = %.4g)", t.Expr, t.Metric, t.Value))
		}
	}
	more := ""
	if failed > named {
		more = fmt.Sprintf("; %d more", failed-named)
	}
	return &exitError{code: ExitThresholds, err: fmt.Errorf("%d of %d thresholds failed: %s%s", failed, len(s.Thresholds), strings.Join(which, "; "), more)}
}

// notValidVerdict is the error that exits with ExitNotValid when s has
// thresholds, all passed, but is NOT VALID and its plan does not allow
// that; nil otherwise.
func notValidVerdict(s *record.Summary) error {
	if len(s.Thresholds) == 0 || s.Validity == nil || s.Validity.Valid || s.ThresholdsAllowInvalid {
		return nil
	}
	return &exitError{code: ExitNotValid, err: fmt.Errorf("the run is NOT VALID (%s): its %d thresholds passed on figures that cannot be trusted; fix the run, or set allow_invalid (--allow-invalid) to gate on it anyway",
		strings.Join(s.Validity.Reasons, "; "), len(s.Thresholds))}
}

// recordsLost is nil when loss says nothing is missing, and otherwise the
// error that exits with ExitRecordsLost, saying what is.
func recordsLost(dir string, loss summary.RecordsLoss) error {
	if !loss.Lost() {
		return nil
	}
	return &exitError{code: ExitRecordsLost, err: fmt.Errorf("%s: %s", dir, loss)}
}

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
	var pe *experiment.PlanError
	if errors.As(err, &pe) {
		return ExitUsage
	}
	return ExitError
}
