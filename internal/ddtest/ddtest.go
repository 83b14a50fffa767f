// Package ddtest runs data-driven test files (cockroachdb/datadriven)
// with a table of directives, the preamble every package's
// TestDataDriven shared: walk a directory, dispatch each directive to
// its case, fail on an unknown one.
package ddtest

import (
	"slices"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
)

// Case turns one directive's input into the output the file expects.
type Case func(t *testing.T, d *datadriven.TestData) string

// Run runs every file under dir, each directive by cases[d.Cmd]. An
// unknown directive fails its test with the names of the known ones.
// Refresh expected outputs with `go test -run DataDriven -rewrite`.
func Run(t *testing.T, dir string, cases map[string]Case) {
	t.Helper()
	datadriven.Walk(t, dir, func(t *testing.T, path string) {
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			c, ok := cases[d.Cmd]
			if !ok {
				names := make([]string, 0, len(cases))
				for name := range cases {
					names = append(names, name)
				}
				slices.Sort(names)
				d.Fatalf(t, "unknown directive %q (want one of %s)", d.Cmd, strings.Join(names, ", "))
				return ""
			}
			return c(t, d)
		})
	})
}
