package analyze

import (
	"fmt"
	"reflect"
	"strings"

	"github.com/inferload/inferload/record"
)

// anyKey stands for a map key or array index in a figure pattern: a name
// the summary only knows once the run has happened (an error kind, a step
// number, a scraped metric).
const anyKey = "*"

// CheckNames rejects, before a run starts, each threshold whose metric can
// name no figure of any summary the run could produce, the way k6 rejects
// a bad threshold at start-up rather than after the test. Paths are
// matched as Resolve matches them, against every number summary.json can
// hold (from record.Summary's fields); a map key or array index matches
// any name, except the keys of "classes", which are the plan's classes
// (any name when classes is nil).
// It only proves a name impossible: a name it lets through may still
// resolve to nothing or be ambiguous, which Evaluate reports.
func CheckNames(ths []record.Threshold, classes []string) error {
	patterns := FigurePatterns(classes)
	for i, t := range ths {
		if !anyPatternMatches(patterns, strings.Split(t.Metric, ".")) {
			return fmt.Errorf("threshold %d: %w %q: no summary figure can match %q (see docs/summary.md)", i+1, record.ErrThreshold, t.Expr, t.Metric)
		}
	}
	return nil
}

// FigurePatterns lists the dotted path of every number summary.json can
// hold, with anyKey for map keys and array indexes, and the class names
// for the keys of "classes".
func FigurePatterns(classes []string) [][]string {
	var out [][]string
	walkFigures(reflect.TypeFor[record.Summary](), nil, classes, map[reflect.Type]bool{}, &out)
	return out
}

func walkFigures(t reflect.Type, prefix []string, classes []string, seen map[reflect.Type]bool, out *[][]string) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Struct:
		if t.PkgPath() == "time" || seen[t] {
			return // times are strings; a recursive type is walked once per path
		}
		seen[t] = true
		defer delete(seen, t)
		for i := range t.NumField() {
			f := t.Field(i)
			name, inline := jsonName(f)
			switch {
			case name == "-" || !f.IsExported():
			case inline:
				walkFigures(f.Type, prefix, classes, seen, out)
			default:
				walkFigures(f.Type, append(prefix[:len(prefix):len(prefix)], name), classes, seen, out)
			}
		}
	case reflect.Map, reflect.Slice, reflect.Array:
		keys := []string{anyKey}
		if len(prefix) == 1 && prefix[0] == "classes" && t.Kind() == reflect.Map && classes != nil {
			keys = classes
		}
		for _, k := range keys {
			walkFigures(t.Elem(), append(prefix[:len(prefix):len(prefix)], k), classes, seen, out)
		}
	case reflect.String, reflect.Interface:
	default: // numbers and bools are figures
		*out = append(*out, prefix)
	}
}

// jsonName is a field's name in JSON and whether it is embedded inline.
func jsonName(f reflect.StructField) (string, bool) {
	tag, _, _ := strings.Cut(f.Tag.Get("json"), ",")
	if tag == "" {
		if f.Anonymous {
			return "", true
		}
		return f.Name, false
	}
	return tag, false
}

func anyPatternMatches(patterns [][]string, want []string) bool {
	for _, p := range patterns {
		if matchesPattern(p, want) {
			return true
		}
	}
	return false
}

// matchesPattern is Resolve's subsequence rule on a pattern: the metric's
// segments appear in order within the pattern, ending on its last. A
// wildcard (a map key, an array index) is matched only by a segment right
// after the one that matched the map's own name: "errors.http_5xx" and
// "steps.2.ttft_ms.p99" can exist, "ttft.p99" cannot just because some map
// might hold a key "ttft".
func matchesPattern(have, want []string) bool {
	if len(want) == 0 || len(want) > len(have) {
		return false
	}
	j := 0
	prevMatched := false
	for k, h := range have {
		if j == len(want) {
			return false // the metric must end on the pattern's last segment
		}
		last := k == len(have)-1
		ok := h == want[j] || (h == anyKey && prevMatched && k > 0)
		if last && !ok {
			return false
		}
		if ok && (last || j < len(want)-1 || k == len(have)-1) {
			j++
		}
		prevMatched = ok
	}
	return j == len(want)
}
