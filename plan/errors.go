package plan

import (
	"fmt"
	"strings"
)

// FieldError is one problem with one plan field.
type FieldError struct {
	// Source says where the value came from: "plan.yaml:7" for a file and
	// line, "--rate" for a flag, or "" for a default or a missing field.
	Source string
	// Field is the field's YAML path, e.g. "load.duration".
	Field string
	// Problem says what is wrong, with a hint where one helps.
	Problem string
}

// Error formats the problem so the user can find the value to fix:
// "plan.yaml:7: load.duration: ...", "--duration: ..." or
// "load.duration: ...".
func (e *FieldError) Error() string {
	switch {
	case strings.HasPrefix(e.Source, "--"):
		return fmt.Sprintf("%s: %s", e.Source, e.Problem)
	case e.Source != "" && e.Field != "":
		return fmt.Sprintf("%s: %s: %s", e.Source, e.Field, e.Problem)
	case e.Source != "":
		return fmt.Sprintf("%s: %s", e.Source, e.Problem)
	}
	return fmt.Sprintf("%s: %s", e.Field, e.Problem)
}

// Errors is every problem found in a plan, in the order found. Load and
// Validate return all of them at once so that a user fixes a plan in one
// pass rather than one error per run.
type Errors []*FieldError

// Error lists the problems one per line.
func (errs Errors) Error() string {
	lines := make([]string, len(errs))
	for i, e := range errs {
		lines[i] = e.Error()
	}
	return strings.Join(lines, "\n")
}

// Unwrap lets errors.As find an individual *FieldError.
func (errs Errors) Unwrap() []error {
	out := make([]error, len(errs))
	for i, e := range errs {
		out[i] = e
	}
	return out
}

// err returns errs as an error, or nil when there are none (a nil Errors
// stored in an error interface would not compare equal to nil).
func (errs Errors) err() error {
	if len(errs) == 0 {
		return nil
	}
	return errs
}
