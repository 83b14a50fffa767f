package plan

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// FuzzPlan feeds arbitrary bytes to the plan reader. It must never panic
// or hang; every rejection must be Errors of FieldErrors; and every plan
// it accepts must survive the trip through plan.yaml: Redacted output
// loads again and redacts to the same bytes.
func FuzzPlan(f *testing.F) {
	for _, name := range []string{"closed.yaml", "open.yaml", "every-field.yaml", "graph.yaml"} {
		data, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := Parse("fuzz.yaml", data)
		if err != nil {
			var errs Errors
			if !errors.As(err, &errs) || len(errs) == 0 {
				t.Fatalf("rejection is not Errors: %#v", err)
			}
			return
		}
		once, err := p.Redacted()
		if err != nil {
			t.Fatalf("Redacted: %v", err)
		}
		back, err := Parse("plan.yaml", once)
		if err != nil {
			t.Fatalf("redacted plan does not load: %v\n%s", err, once)
		}
		twice, err := back.Redacted()
		if err != nil {
			t.Fatalf("Redacted again: %v", err)
		}
		if string(once) != string(twice) {
			t.Fatalf("plan.yaml is not stable:\n%s\n---\n%s", once, twice)
		}
	})
}
