package record

import (
	"os"
	"reflect"
	"strings"
	"testing"
)

// TestStepsDocumented: every field of steps[], knee and capacity is named
// in docs/summary.md (TestSummaryDocumented cannot see them: a plain run
// has none). A field may also be covered by a row that lists it, like
// "`steps[].requests` … `steps[].throughput`".
func TestStepsDocumented(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile("../docs/summary.md")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(doc), "\n")
	tests := []struct {
		prefix string
		typ    reflect.Type
	}{
		{"steps[].", reflect.TypeFor[Step]()},              // per-stage figures
		{"steps[].validity.", reflect.TypeFor[Validity]()}, // the verdict
		{"knee.", reflect.TypeFor[Knee]()},                 // a sweep's knee
		{"capacity.", reflect.TypeFor[Capacity]()},         // a search's answer
		{"capacity.probes[].", reflect.TypeFor[CapacityProbe]()},
		{"soak.", reflect.TypeFor[Soak]()}, // a soak's windows
		{"soak.windows[].", reflect.TypeFor[SoakWindow]()},
		{"soak.drift[].", reflect.TypeFor[Drift]()},
	}
	for _, tt := range tests {
		for i := range tt.typ.NumField() {
			name, _, _ := strings.Cut(tt.typ.Field(i).Tag.Get("json"), ",")
			if !documented(lines, tt.prefix, name) {
				t.Errorf("docs/summary.md does not document `%s%s`", tt.prefix, name)
			}
		}
	}
}

// documented: a table row names prefix+name, or names a prefix field and
// lists `name` (a row covering several fields).
func documented(lines []string, prefix, name string) bool {
	for _, l := range lines {
		if strings.Contains(l, "`"+prefix+name+"`") {
			return true
		}
		if strings.HasPrefix(l, "| `"+prefix) && strings.Contains(l, "`"+name+"`") {
			return true
		}
	}
	return false
}
