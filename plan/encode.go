package plan

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// Redacted returns the plan as YAML for the run directory's plan.yaml, with
// secrets replaced by Redaction: values of headers and body fields whose
// names look secret (see looksSecret), and a password or secret query
// value in the URL. Durations are written as "90s"-style strings and unset
// fields are left out, so Load reads the file back to the same plan.
func (p *Plan) Redacted() ([]byte, error) {
	c := *p
	c.Target.URL = redactURL(p.Target.URL)
	if len(p.Target.Replicas) > 0 {
		c.Target.Replicas = make([]string, len(p.Target.Replicas))
		for i, r := range p.Target.Replicas {
			c.Target.Replicas[i] = redactURL(r)
		}
	}
	c.Target.Headers = redactHeaders(p.Target.Headers)
	if p.Target.Body != nil {
		c.Target.Body = redactBody(p.Target.Body).(map[string]any)
	}
	c.Workload.Classes = redactClasses(p.Workload.Classes)
	n, err := encodeValue(reflect.ValueOf(c))
	if err != nil {
		return nil, fmt.Errorf("plan: encoding the resolved plan: %w", err)
	}
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(n); err != nil {
		return nil, fmt.Errorf("plan: encoding the resolved plan: %w", err)
	}
	if err := enc.Close(); err != nil {
		return nil, fmt.Errorf("plan: encoding the resolved plan: %w", err)
	}
	return buf.Bytes(), nil
}

// redactClasses copies classes, hiding secret-looking body fields.
func redactClasses(classes []Class) []Class {
	if classes == nil {
		return nil
	}
	out := slices.Clone(classes)
	for k := range out {
		if out[k].Body != nil {
			out[k].Body = redactBody(out[k].Body).(map[string]any)
		}
		out[k].Chain = redactChain(out[k].Chain)
		out[k].Graph = redactGraph(out[k].Graph)
	}
	return out
}

// redactHeaders copies headers, hiding the values of secret-looking ones.
func redactHeaders(h map[string]string) map[string]string {
	if h == nil {
		return nil
	}
	out := make(map[string]string, len(h))
	for k, v := range h {
		if looksSecret(k) {
			v = Redaction
		}
		out[k] = v
	}
	return out
}

// encodeValue builds the YAML node for a plan value, or nil to leave the
// field out (a zero value, which Load reads as its default).
func encodeValue(v reflect.Value) (*yaml.Node, error) {
	if v.IsZero() {
		return nil, nil
	}
	switch {
	case v.Type() == durationType:
		return scalar("!!str", formatDuration(time.Duration(v.Int()))), nil
	case v.Kind() == reflect.Struct:
		return encodeStruct(v)
	case v.Kind() == reflect.Pointer:
		// A set pointer is written even when it points at false: that is
		// the point of *bool options (stream: false is not the default).
		return encodeAny(v.Elem().Interface())
	case v.Kind() == reflect.Map:
		return encodeMap(v)
	case v.Kind() == reflect.Slice && v.Type().Elem().Kind() != reflect.String:
		return encodeList(v)
	}
	return encodeAny(v.Interface())
}

// encodeList encodes a list of numbers (on one line) or of sections
// (classes).
func encodeList(v reflect.Value) (*yaml.Node, error) {
	seq := &yaml.Node{Kind: yaml.SequenceNode}
	if v.Type().Elem().Kind() != reflect.Struct {
		seq.Style = yaml.FlowStyle
	}
	for k := range v.Len() {
		n, err := encodeValue(v.Index(k))
		if err != nil {
			return nil, fmt.Errorf("[%d]: %w", k, err)
		}
		if n == nil {
			n = &yaml.Node{Kind: yaml.MappingNode}
		}
		seq.Content = append(seq.Content, n)
	}
	return seq, nil
}

// encodeStruct encodes the yaml-tagged fields that are set.
func encodeStruct(v reflect.Value) (*yaml.Node, error) {
	m := &yaml.Node{Kind: yaml.MappingNode}
	for i := range v.NumField() {
		name := yamlName(v.Type().Field(i))
		if name == "" {
			continue
		}
		val, err := encodeValue(v.Field(i))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		if val != nil {
			m.Content = append(m.Content, scalar("!!str", name), val)
		}
	}
	if len(m.Content) == 0 {
		return nil, nil
	}
	return m, nil
}

// encodeMap encodes a map with its keys sorted, so plan.yaml is stable.
func encodeMap(v reflect.Value) (*yaml.Node, error) {
	keys := make([]string, 0, v.Len())
	for _, k := range v.MapKeys() {
		keys = append(keys, k.String())
	}
	slices.Sort(keys)
	m := &yaml.Node{Kind: yaml.MappingNode}
	for _, k := range keys {
		val, err := encodeAny(v.MapIndex(reflect.ValueOf(k).Convert(v.Type().Key())).Interface())
		if err != nil {
			return nil, fmt.Errorf("%s: %w", k, err)
		}
		m.Content = append(m.Content, scalar("!!str", k), val)
	}
	return m, nil
}

// encodeAny encodes a leaf or a JSON body value. Unlike yaml's own
// encoder it keeps a json.Number (from a --body flag) a number, and
// writes empty maps and lists rather than dropping them.
func encodeAny(x any) (*yaml.Node, error) {
	switch x := x.(type) {
	case json.Number:
		if _, err := strconv.ParseInt(string(x), 10, 64); err == nil {
			return scalar("!!int", string(x)), nil
		}
		return scalar("!!float", string(x)), nil
	case map[string]any:
		return encodeMap(reflect.ValueOf(x))
	case []any:
		seq := &yaml.Node{Kind: yaml.SequenceNode, Style: yaml.FlowStyle}
		for _, item := range x {
			n, err := encodeAny(item)
			if err != nil {
				return nil, err
			}
			seq.Content = append(seq.Content, n)
		}
		return seq, nil
	}
	var n yaml.Node
	if err := n.Encode(x); err != nil {
		return nil, err
	}
	return &n, nil
}

// formatDuration writes d as a person would: "10m" rather than Go's
// "10m0s", "1h" rather than "1h0m0s". time.ParseDuration reads both.
func formatDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = s[:len(s)-2]
	}
	if strings.HasSuffix(s, "h0m") {
		s = s[:len(s)-2]
	}
	return s
}

// scalar builds a scalar node; yaml quotes the value if its plain form
// would read back as another type ("true" as a string, say).
func scalar(tag, value string) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: tag, Value: value}
}
