package plan

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/inferload/inferload/internal/inputfile"
)

// Load builds the plan for a run: the YAML file at path (if path is not
// ""), then the flags the user set (fl may be nil), then defaults, then
// validation. Every problem is reported at once as Errors, each naming the
// field and the file line or flag it came from, e.g.
//
//	plan.yaml:12: load.concurency: unknown field (did you mean "concurrency"?)
//	plan.yaml:7: load.duration: "2 min" is not a duration (e.g. 90s, 2m)
//
// getenv (nil to skip the check) is used only to check that the variable
// named by target.api_key_env is set, so a missing key fails before the run
// starts rather than as a wall of 401s; the key itself is read later by
// APIKey and never kept in the Plan.
func Load(path string, fl *Flags, getenv func(string) string) (*Plan, error) {
	var data []byte
	if path != "" {
		var err error
		// Bounded: a plan is kilobytes; /dev/zero is refused at 16 MiB.
		if data, err = inputfile.Read(context.Background(), path, inputfile.Plan); err != nil {
			return nil, fmt.Errorf("plan: %w", err)
		}
	}
	return LoadData(path, data, fl, getenv)
}

// LoadData is Load for a plan file its caller has read (`inferload ui`
// reads it from its plan directories only, bounded): data is the file
// named path, and no plan file when path is "".
func LoadData(path string, data []byte, fl *Flags, getenv func(string) string) (*Plan, error) {
	p := &Plan{}
	if path != "" {
		if errs := decodeYAML(path, data, p); len(errs) > 0 {
			return nil, errs
		}
	}
	if fl != nil {
		fl.Apply(p)
	}
	p.ApplyDefaults()
	var errs Errors
	if err := p.Validate(); err != nil && !errors.As(err, &errs) {
		return nil, err
	}
	if env := p.Target.APIKeyEnv; env != "" && getenv != nil && strings.TrimSpace(getenv(env)) == "" {
		errs = append(errs, &FieldError{Source: p.origin["target.api_key_env"], Field: "target.api_key_env",
			Problem: fmt.Sprintf("environment variable %s is unset or empty", env)})
	}
	if len(errs) > 0 {
		return nil, errs
	}
	return p, nil
}

// Parse is Load for a plan already in memory: data is read as if it came
// from a file called name. It applies no flags and does not check the
// environment.
func Parse(name string, data []byte) (*Plan, error) {
	p := &Plan{}
	if errs := decodeYAML(name, data, p); len(errs) > 0 {
		return nil, errs
	}
	p.ApplyDefaults()
	if err := p.Validate(); err != nil {
		return nil, err
	}
	return p, nil
}
