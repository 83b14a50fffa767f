package plan

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"
)

// field is one entry of the plan schema, found by walking Plan's yaml tags.
type field struct {
	Path string // e.g. "target.timeouts.connect"
	Type reflect.Type
	Leaf bool // false for sections (target, load, ...)
}

// schema lists every field of Plan, sections first then their fields, in
// declaration order. It is computed once; Plan does not change at run time.
var schema = sync.OnceValue(func() []field {
	return walkFields(reflect.TypeFor[Plan](), "")
})

// walkFields lists the yaml-tagged fields of struct t under prefix.
func walkFields(t reflect.Type, prefix string) []field {
	var out []field
	for i := range t.NumField() {
		name := yamlName(t.Field(i))
		if name == "" {
			continue
		}
		ft := t.Field(i).Type
		path := join(prefix, name)
		if ft.Kind() == reflect.Struct && ft != durationType {
			out = append(out, field{Path: path, Type: ft})
			out = append(out, walkFields(ft, path)...)
			continue
		}
		out = append(out, field{Path: path, Type: ft, Leaf: true})
	}
	return out
}

// FieldPaths returns the YAML path of every plan option ("name",
// "target.url", "target.timeouts.connect", ...), in schema order. Tools
// and tests use it to check that every option is documented.
func FieldPaths() []string {
	var out []string
	for _, f := range schema() {
		if f.Leaf {
			out = append(out, f.Path)
		}
	}
	return out
}

// suggest returns a hint for an unknown key found under path: the closest
// known sibling when one is near, else the same name in another section,
// else the list of fields allowed there.
func suggest(key, path string, known map[string]int) string {
	norm := strings.ReplaceAll(strings.ToLower(strings.TrimSpace(key)), "-", "_")
	names := make([]string, 0, len(known))
	for name := range known {
		names = append(names, name)
	}
	slices.Sort(names)
	best, bestDist := "", 0
	for _, name := range names {
		dist := editDistance(norm, name)
		if dist <= max(2, len(name)/4) && (best == "" || dist < bestDist) {
			best, bestDist = name, dist
		}
	}
	if best != "" {
		return fmt.Sprintf(" (did you mean %q?)", best)
	}
	for _, f := range schema() {
		if f.Path == norm || strings.HasSuffix(f.Path, "."+norm) {
			return fmt.Sprintf(" (did you mean %q? it belongs under %s)", f.Path, orRoot(parentPath(f.Path)))
		}
	}
	return fmt.Sprintf(" (%s has: %s)", orRoot(path), strings.Join(names, ", "))
}

// parentPath is the section holding path: "load" for "load.rate".
func parentPath(path string) string {
	i := strings.LastIndexByte(path, '.')
	if i < 0 {
		return ""
	}
	return path[:i]
}

// editDistance is the Levenshtein distance between a and b, in bytes.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
