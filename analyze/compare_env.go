package analyze

import (
	"fmt"
	"sort"
	"strings"
)

// EnvChange is one env.json field that differs between two runs. A field
// present in only one run has Absent set to "baseline" or "current".
type EnvChange struct {
	// Field is the dotted path, e.g. "target.served.version".
	Field    string `json:"field"`
	Baseline string `json:"baseline"`
	Current  string `json:"current"`
	Absent   string `json:"absent,omitempty"`
}

// DiffEnv lists the fields of two env.json documents that differ, sorted
// by field. Arrays of plain values compare as their comma-joined values,
// arrays of objects element by element.
func DiffEnv(baseline, current map[string]any) []EnvChange {
	b, c := map[string]string{}, map[string]string{}
	FlattenJSON(b, "", baseline)
	FlattenJSON(c, "", current)
	out := []EnvChange{}
	for _, k := range unionKeys(b, c) {
		bv, inB := b[k]
		cv, inC := c[k]
		switch {
		case !inB:
			out = append(out, EnvChange{Field: k, Current: cv, Absent: "baseline"})
		case !inC:
			out = append(out, EnvChange{Field: k, Baseline: bv, Absent: "current"})
		case bv != cv:
			out = append(out, EnvChange{Field: k, Baseline: bv, Current: cv})
		}
	}
	return out
}

func unionKeys(a, b map[string]string) []string {
	keys := make([]string, 0, len(a)+len(b))
	for k := range a {
		keys = append(keys, k)
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	return keys
}

// FlattenJSON writes every leaf of v (decoded JSON) into out under its
// dotted path; a list of objects gets an index per element (gpus.0.name),
// a list of scalars is one comma-joined value. The compare diff and the
// report's environment table both key env.json fields this way.
func FlattenJSON(out map[string]string, prefix string, v any) {
	switch v := v.(type) {
	case map[string]any:
		for k, sub := range v {
			if prefix != "" {
				k = prefix + "." + k
			}
			FlattenJSON(out, k, sub)
		}
	case []any:
		if !allScalars(v) {
			// A list of objects (GPUs) diffs field by field: gpus.0.name.
			for i, x := range v {
				FlattenJSON(out, fmt.Sprintf("%s.%d", prefix, i), x)
			}
			return
		}
		parts := make([]string, len(v))
		for i, x := range v {
			parts[i] = fmt.Sprint(x)
		}
		out[prefix] = strings.Join(parts, ", ")
	case nil:
		if prefix != "" {
			out[prefix] = "null"
		}
	default:
		out[prefix] = fmt.Sprint(v)
	}
}

func allScalars(v []any) bool {
	for _, x := range v {
		switch x.(type) {
		case map[string]any, []any:
			return false
		}
	}
	return true
}
