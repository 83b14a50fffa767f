package plan

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/inferload/inferload/record"
)

// classFlag collects --class values, each one request class written as
// key=value pairs separated by commas outside parentheses, so that
// "name=chat,weight=7,input_tokens=uniform(64,256)" keeps its distribution
// whole.
type classFlag struct {
	items []Class
	raw   []string
}

// String shows the classes given, for error messages.
func (cf *classFlag) String() string {
	if len(cf.raw) == 0 {
		return ""
	}
	return "[" + strings.Join(cf.raw, " ") + "]"
}

// Type names the value in --help.
func (cf *classFlag) Type() string { return "key=value,..." }

// Set parses one class.
func (cf *classFlag) Set(s string) error {
	c := Class{}
	for _, kv := range splitOutsideParens(s) {
		key, value, ok := strings.Cut(kv, "=")
		key, value = strings.TrimSpace(key), strings.TrimSpace(value)
		if !ok || key == "" {
			return fmt.Errorf("want key=value pairs, got %q", kv)
		}
		if err := c.setFlagKey(key, value); err != nil {
			return fmt.Errorf("%s: %w", key, err)
		}
	}
	if c.Name == "" {
		return fmt.Errorf("a class needs a name, e.g. name=chat,weight=7,input_tokens=128")
	}
	cf.items = append(cf.items, c)
	cf.raw = append(cf.raw, s)
	return nil
}

// classFlagKeys are the keys --class takes (setFlagKey; input and output
// are short for input_tokens and output_tokens).
var classFlagKeys = []string{"name", "weight", "input_tokens", "output_tokens", "ignore_eos", "api",
	"prefix_tokens", "prefix_fraction", "prefix_groups", "slo", "slo_ttft_ms", "slo_tpot_ms", "slo_e2e_ms", "turns", "history",
	"connect_timeout", "ttft_timeout", "timeout", "images", "image_size", "image_format", "documents", "document_tokens", "audio_seconds"}

// classFlagKeyList is classFlagKeys as a list, the last joined by last.
func classFlagKeyList(last string) string {
	n := len(classFlagKeys)
	return strings.Join(classFlagKeys[:n-1], ", ") + last + classFlagKeys[n-1]
}

// setFlagKey sets one field of a class from a --class key.
func (c *Class) setFlagKey(key, value string) error {
	var err error
	switch key {
	case "name":
		c.Name = value
	case "weight":
		c.Weight, err = strconv.ParseFloat(value, 64)
	case "input_tokens", "input":
		c.InputTokens = value
	case "output_tokens", "output":
		c.OutputTokens = value
	case "api":
		c.API = value
	case "ignore_eos":
		var b bool
		b, err = strconv.ParseBool(value)
		c.IgnoreEOS = &b
	case "prefix_tokens":
		c.SharedPrefix.Tokens, err = strconv.Atoi(value)
	case "prefix_fraction":
		c.SharedPrefix.Fraction, err = strconv.ParseFloat(value, 64)
	case "prefix_groups":
		c.SharedPrefix.Groups, err = strconv.Atoi(value)
	case "slo":
		// One bound in the threshold language (slo=ttft<=500ms); the key
		// repeats for more, as a comma ends the pair.
		return c.addBound(value)
	case "slo_ttft_ms":
		c.SLO.TTFTMs, err = strconv.ParseFloat(value, 64)
	case "slo_tpot_ms":
		c.SLO.TPOTMs, err = strconv.ParseFloat(value, 64)
	case "slo_e2e_ms":
		c.SLO.E2EMs, err = strconv.ParseFloat(value, 64)
	case "turns":
		c.Turns, err = strconv.Atoi(value)
	case "history":
		c.History = value // checked with the plan (turns)
	case "connect_timeout":
		c.Timeouts.Connect, err = time.ParseDuration(value)
	case "ttft_timeout":
		c.Timeouts.TTFT, err = time.ParseDuration(value)
	case "timeout":
		c.Timeouts.Total, err = time.ParseDuration(value)
	case "images":
		c.Images.Count, err = strconv.Atoi(value)
	case "image_size":
		c.Images.Size = value
	case "image_format":
		c.Images.Format = value
	case "documents":
		c.Documents.Count, err = strconv.Atoi(value)
	case "document_tokens":
		c.Documents.Tokens = value
	case "audio_seconds":
		c.Audio.Seconds = value
	default:
		return fmt.Errorf("unknown key (want %s; body fields only in a plan file)", classFlagKeyList(" or "))
	}
	if err != nil {
		return fmt.Errorf("%q is not valid", value)
	}
	return nil
}

// addBound adds one per-request bound to the class's SLO; a bound the
// class already has is an error, as in ParseBounds.
func (c *Class) addBound(expr string) error {
	b, err := record.ParseBounds([]string{expr})
	if err != nil {
		return err
	}
	if b.TTFTMs > 0 && c.SLO.TTFTMs > 0 || b.TPOTMs > 0 && c.SLO.TPOTMs > 0 || b.E2EMs > 0 && c.SLO.E2EMs > 0 {
		return fmt.Errorf("%q bounds a figure the class already bounds", expr)
	}
	c.SLO = b.Over(c.SLO)
	return nil
}

// splitOutsideParens splits s at commas that are not inside parentheses.
func splitOutsideParens(s string) []string {
	var out []string
	depth, start := 0, 0
	for i, r := range s {
		switch {
		case r == '(':
			depth++
		case r == ')':
			depth--
		case r == ',' && depth == 0:
			out = append(out, s[start:i])
			start = i + 1
		}
	}
	return append(out, s[start:])
}
