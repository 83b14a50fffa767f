package plan

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/inferload/inferload/record"
	"go.yaml.in/yaml/v3"
)

// Limits on what a plan file may hold. A plan is a few dozen lines; these
// only stop a wrong file or an alias bomb from eating memory.
const (
	maxPlanBytes = 1 << 20
	maxNodes     = 100_000
	maxBodyDepth = 64
)

var (
	durationType = reflect.TypeFor[time.Duration]()
	sloType      = reflect.TypeFor[record.SLO]()
)

// decoder fills a Plan from a YAML node tree. It checks every key against
// the schema itself, rather than leaving it to yaml's KnownFields, so that
// each problem carries its YAML path and line and all problems are
// reported together.
type decoder struct {
	file  string
	plan  *Plan
	errs  Errors
	nodes int
}

// decodeYAML fills p from data, read from file (used in messages).
func decodeYAML(file string, data []byte, p *Plan) Errors {
	if len(data) > maxPlanBytes {
		return Errors{{Source: file, Problem: fmt.Sprintf("%d bytes is larger than a plan can be (%d)", len(data), maxPlanBytes)}}
	}
	root, err := parseDocument(file, data)
	if err != nil {
		return Errors{err}
	}
	if root == nil {
		return nil
	}
	d := &decoder{file: file, plan: p}
	d.decode(root, reflect.ValueOf(p).Elem(), "")
	return d.errs
}

// parseDocument returns the root node of data's only YAML document, or nil
// for an empty file.
func parseDocument(file string, data []byte) (*yaml.Node, *FieldError) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, nil
		}
		return nil, syntaxError(file, err)
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		if err != nil {
			return nil, syntaxError(file, err)
		}
		return nil, &FieldError{Source: fmt.Sprintf("%s:%d", file, extra.Line), Problem: "a second YAML document starts here; a plan file holds one"}
	}
	if len(doc.Content) == 0 {
		return nil, nil
	}
	return doc.Content[0], nil
}

var yamlLineError = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// syntaxError turns "yaml: line 3: did not find expected key" into a
// FieldError at plan.yaml:3.
func syntaxError(file string, err error) *FieldError {
	msg := err.Error()
	if m := yamlLineError.FindStringSubmatch(msg); m != nil {
		return &FieldError{Source: file + ":" + m[1], Problem: "YAML syntax: " + m[2]}
	}
	return &FieldError{Source: file, Problem: "YAML syntax: " + strings.TrimPrefix(msg, "yaml: ")}
}

// fail records a problem with the value at node n, the field at path.
func (d *decoder) fail(n *yaml.Node, path, format string, args ...any) {
	d.errs = append(d.errs, &FieldError{Source: d.pos(n), Field: path, Problem: fmt.Sprintf(format, args...)})
}

// pos is n's location as "file:line".
func (d *decoder) pos(n *yaml.Node) string {
	return fmt.Sprintf("%s:%d", d.file, n.Line)
}

// resolve follows aliases and counts nodes, returning nil (after recording
// a problem) once the document is implausibly large.
func (d *decoder) resolve(n *yaml.Node, path string) *yaml.Node {
	for n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	d.nodes++
	if d.nodes == maxNodes {
		d.fail(n, path, "the plan expands to more than %d YAML nodes (aliases?)", maxNodes)
	}
	if d.nodes >= maxNodes {
		return nil
	}
	return n
}

// isNull reports whether n is an explicit or empty null ("rate:" alone).
func isNull(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.Tag == "!!null"
}

// decode stores node n in v, the field at path, and reports whether it
// stored a value. A null leaves v at its zero value (the default).
func (d *decoder) decode(n *yaml.Node, v reflect.Value, path string) bool {
	n = d.resolve(n, path)
	if n == nil || isNull(n) {
		return false
	}
	switch {
	case v.Type() == durationType:
		return d.duration(n, v, path)
	case v.Type() == sloType && n.Kind != yaml.MappingNode:
		return d.bounds(n, v, path)
	case v.Kind() == reflect.Struct:
		d.fields(n, v, path)
		return true
	case v.Kind() == reflect.Pointer:
		elem := reflect.New(v.Type().Elem())
		if !d.decode(n, elem.Elem(), path) {
			return false
		}
		v.Set(elem)
		return true
	case v.Kind() == reflect.Slice && v.Type().Elem().Kind() != reflect.String:
		return d.list(n, v, path)
	case v.Kind() == reflect.Map && v.Type().Elem().Kind() == reflect.String:
		return d.stringMap(n, v, path)
	case v.Kind() == reflect.Map:
		return d.jsonMap(n, v, path)
	case v.Kind() == reflect.String:
		return d.str(n, v, path)
	case v.Kind() == reflect.Slice:
		return d.list(n, v, path) // of strings: thresholds
	}
	return d.number(n, v, path)
}

// fields decodes a mapping into the struct v, one yaml-tagged field per key.
func (d *decoder) fields(n *yaml.Node, v reflect.Value, path string) {
	if n.Kind != yaml.MappingNode {
		d.fail(n, orRoot(path), "want a mapping of fields, got %s", kindName(n))
		return
	}
	known := fieldIndex(v.Type())
	d.eachKey(n, path, false, func(key string, k, val *yaml.Node, child string) {
		i, ok := known[key]
		if !ok {
			d.fail(k, child, "unknown field%s", suggest(key, path, known))
			return
		}
		if d.decode(val, v.Field(i), child) {
			d.plan.setOrigin(child, d.pos(val))
		}
	})
}

// eachKey calls fn for each key of mapping n after checking that the key
// is a plain scalar and not a duplicate (compared without case when
// foldCase, as HTTP header names are).
func (d *decoder) eachKey(n *yaml.Node, path string, foldCase bool, fn func(key string, k, val *yaml.Node, child string)) {
	seen := make(map[string]int)
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, val := d.resolve(n.Content[i], path), n.Content[i+1]
		if k == nil {
			return
		}
		if k.Kind != yaml.ScalarNode || k.Tag == "!!merge" {
			d.fail(k, path, "keys must be plain names (merge keys and complex keys are not supported)")
			continue
		}
		child := join(path, k.Value)
		id := k.Value
		if foldCase {
			id = strings.ToLower(id)
		}
		if first, dup := seen[id]; dup {
			d.fail(k, child, "duplicate key (first at line %d)", first)
			continue
		}
		seen[id] = k.Line
		fn(k.Value, k, val, child)
	}
}

// duration parses a Go duration string such as "90s" or "2m".
func (d *decoder) duration(n *yaml.Node, v reflect.Value, path string) bool {
	if n.Kind != yaml.ScalarNode {
		d.fail(n, path, "want a duration (e.g. 90s, 2m), got %s", kindName(n))
		return false
	}
	dur, err := time.ParseDuration(n.Value)
	if err != nil {
		d.fail(n, path, "%q is not a duration (e.g. 90s, 2m)", n.Value)
		return false
	}
	v.SetInt(int64(dur))
	return true
}

// bounds reads an SLO written in the threshold language: one string
// ("ttft <= 500ms, tpot <= 50ms") or a list of them. The mapping form
// (ttft_ms: 500) is the older spelling, decoded field by field.
func (d *decoder) bounds(n *yaml.Node, v reflect.Value, path string) bool {
	var exprs []string
	switch n.Kind {
	case yaml.ScalarNode:
		exprs = []string{n.Value}
	case yaml.SequenceNode:
		for _, item := range n.Content {
			if item = d.resolve(item, path); item == nil {
				return false
			}
			if item.Kind != yaml.ScalarNode {
				d.fail(item, path, "want a bound such as \"ttft <= 500ms\", got %s", kindName(item))
				return false
			}
			exprs = append(exprs, item.Value)
		}
	default:
		d.fail(n, path, "want bounds such as \"ttft <= 500ms, tpot <= 50ms\" (or a list of them), got %s", kindName(n))
		return false
	}
	slo, err := record.ParseBounds(exprs)
	if err != nil {
		d.fail(n, path, "%v", err)
		return false
	}
	v.Set(reflect.ValueOf(slo))
	return true
}

// str stores any scalar's text: "input_tokens: 512" is the string "512".
func (d *decoder) str(n *yaml.Node, v reflect.Value, path string) bool {
	if n.Kind != yaml.ScalarNode {
		d.fail(n, path, "want a string, got %s", kindName(n))
		return false
	}
	v.SetString(n.Value)
	return true
}

// number decodes an int, uint, float or bool scalar. It checks the YAML
// type first because yaml would otherwise truncate 1.5 into an int field.
func (d *decoder) number(n *yaml.Node, v reflect.Value, path string) bool {
	kinds := map[reflect.Kind]struct{ want, tags string }{
		reflect.Int:     {"an integer", "!!int"},
		reflect.Uint64:  {"a non-negative integer", "!!int"},
		reflect.Float64: {"a number", "!!int !!float"},
		reflect.Bool:    {"true or false", "!!bool"},
	}
	k, ok := kinds[v.Kind()]
	if !ok {
		// Only reachable if the schema gains a field of a new type without
		// this decoder learning it; TestEveryFieldDecodes guards that.
		d.fail(n, path, "fields of type %s cannot be read yet (a bug in inferload)", v.Type())
		return false
	}
	if n.Kind != yaml.ScalarNode {
		d.fail(n, path, "want %s, got %s", k.want, kindName(n))
		return false
	}
	if !slices.Contains(strings.Fields(k.tags), n.ShortTag()) || n.Decode(v.Addr().Interface()) != nil {
		d.fail(n, path, "%q is not %s", n.Value, k.want)
		return false
	}
	return true
}

// maxListItems bounds a list option (classes, length buckets): a plan
// lists a handful.
const maxListItems = 1000

// list decodes a sequence into the slice v, item k at path[k]; a flow
// list "[256, 1024]" and a block list read the same.
func (d *decoder) list(n *yaml.Node, v reflect.Value, path string) bool {
	if n.Kind != yaml.SequenceNode {
		d.fail(n, path, "want a list, got %s", kindName(n))
		return false
	}
	if len(n.Content) > maxListItems {
		d.fail(n, path, "%d items is more than a plan lists (%d)", len(n.Content), maxListItems)
		return false
	}
	out := reflect.MakeSlice(v.Type(), len(n.Content), len(n.Content))
	for k, item := range n.Content {
		child := fmt.Sprintf("%s[%d]", path, k)
		if d.decode(item, out.Index(k), child) {
			d.plan.setOrigin(child, d.pos(item))
		}
	}
	v.Set(out)
	return true
}

// stringMap decodes a mapping of strings (headers).
func (d *decoder) stringMap(n *yaml.Node, v reflect.Value, path string) bool {
	if n.Kind != yaml.MappingNode {
		d.fail(n, path, "want a mapping of names to values, got %s", kindName(n))
		return false
	}
	m := reflect.MakeMap(v.Type())
	d.eachKey(n, path, true, func(key string, _, val *yaml.Node, child string) {
		val = d.resolve(val, child)
		if val == nil {
			return
		}
		if val.Kind != yaml.ScalarNode || isNull(val) {
			d.fail(val, child, "want a string value, got %s", kindName(val))
			return
		}
		m.SetMapIndex(reflect.ValueOf(key), reflect.ValueOf(val.Value))
		d.plan.setOrigin(child, d.pos(val))
	})
	v.Set(m)
	return true
}

// jsonMap decodes a mapping of JSON-compatible values (extra body fields).
func (d *decoder) jsonMap(n *yaml.Node, v reflect.Value, path string) bool {
	if n.Kind != yaml.MappingNode {
		d.fail(n, path, "want a mapping of field names to values, got %s", kindName(n))
		return false
	}
	m := make(map[string]any)
	d.eachKey(n, path, false, func(key string, _, val *yaml.Node, child string) {
		if x, ok := d.jsonValue(val, child, 0); ok {
			m[key] = x
			d.plan.setOrigin(child, d.pos(val))
		}
	})
	v.Set(reflect.ValueOf(m))
	return true
}

// jsonValue converts a YAML value to what encoding/json would produce for
// the same JSON: nil, bool, int, float64, string, []any, map[string]any.
func (d *decoder) jsonValue(n *yaml.Node, path string, depth int) (any, bool) {
	n = d.resolve(n, path)
	if n == nil {
		return nil, false
	}
	if depth > maxBodyDepth {
		d.fail(n, path, "nested more than %d levels deep", maxBodyDepth)
		return nil, false
	}
	switch n.Kind {
	case yaml.SequenceNode:
		out := make([]any, 0, len(n.Content))
		for i, item := range n.Content {
			x, ok := d.jsonValue(item, fmt.Sprintf("%s[%d]", path, i), depth+1)
			if !ok {
				return nil, false
			}
			out = append(out, x)
		}
		return out, true
	case yaml.MappingNode:
		out := make(map[string]any)
		ok := true
		d.eachKey(n, path, false, func(key string, _, val *yaml.Node, child string) {
			x, good := d.jsonValue(val, child, depth+1)
			out[key], ok = x, ok && good
		})
		return out, ok
	}
	return d.jsonScalar(n, path)
}

// jsonScalar converts a YAML scalar; only null, bool, int and float tags
// become non-strings, so "version: 1.0" in quotes stays a string.
func (d *decoder) jsonScalar(n *yaml.Node, path string) (any, bool) {
	switch n.Tag {
	case "!!null":
		return nil, true
	case "!!bool", "!!int", "!!float":
		var x any
		if err := n.Decode(&x); err != nil {
			d.fail(n, path, "%q is not a valid %s", n.Value, strings.TrimPrefix(n.Tag, "!!"))
			return nil, false
		}
		if f, isFloat := x.(float64); isFloat && (math.IsInf(f, 0) || math.IsNaN(f)) {
			d.fail(n, path, "%s cannot be sent as JSON", n.Value)
			return nil, false
		}
		return x, true
	}
	return n.Value, true
}

// fieldIndex maps a struct's yaml tags to field indexes.
func fieldIndex(t reflect.Type) map[string]int {
	m := make(map[string]int, t.NumField())
	for i := range t.NumField() {
		if tag := yamlName(t.Field(i)); tag != "" {
			m[tag] = i
		}
	}
	return m
}

// yamlName is a field's YAML key, or "" for unexported or untagged fields.
func yamlName(f reflect.StructField) string {
	if !f.IsExported() {
		return ""
	}
	name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
	if name == "-" {
		return ""
	}
	return name
}

// join builds a YAML path: join("load", "rate") is "load.rate".
func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// orRoot names the top level in messages, where the path is empty.
func orRoot(path string) string {
	if path == "" {
		return "(top level)"
	}
	return path
}

// kindName describes a node for "want X, got Y" messages.
func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		if isNull(n) {
			return "nothing (null)"
		}
		return strconv.Quote(n.Value)
	}
	return "something else"
}
