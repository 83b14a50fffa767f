package analyze

import (
	"reflect"
	"strings"
	"testing"

	"github.com/inferload/inferload/record"
)

// TestCheckNames: names that can exist pass before the run, names that
// cannot are refused with the expression.
func TestCheckNames(t *testing.T) {
	t.Parallel()
	tests := []struct {
		metric string
		ok     bool
	}{
		{"ttft_ms.p99", true},                       // short name of an overall figure
		{"error_rate", true},                        // an alias
		{"metrics.e2e_ms.p50", true},                // an exact path
		{"classes.chat.ttft_ms.p95", true},          // a plan class
		{"steps.2.throughput.requests_per_s", true}, // a step index
		{"errors.http_5xx", true},                   // a map key known only after the run
		{"ttft.p42", false},                         // typo: no figure ends in ttft_ms.p42
		{"ttft.p99", true},                          // the short name of ttft_ms.p99
		{"classes.docs.ttft_ms.p95", false},         // no class docs in the plan
		{"ttft_ms.p42", false},                      // no such percentile
		{"goodput_rps", false},                      // a made-up name
	}
	for _, tt := range tests {
		th, err := record.ParseThreshold(tt.metric + " < 1")
		if err != nil {
			t.Fatal(err)
		}
		err = CheckNames([]record.Threshold{th}, []string{"chat", "default"})
		if (err == nil) != tt.ok {
			t.Errorf("CheckNames(%s) = %v, want ok %v", tt.metric, err, tt.ok)
		}
		if err != nil && !strings.Contains(err.Error(), tt.metric) {
			t.Errorf("CheckNames(%s): error %q does not name the metric", tt.metric, err)
		}
	}
}

// TestFigurePatternsCoverEverySummaryFigure: every number of a summary
// with every field filled is matched by a pattern, so CheckNames can never
// refuse a figure a real summary holds.
func TestFigurePatternsCoverEverySummaryFigure(t *testing.T) {
	t.Parallel()
	var s record.Summary
	fill(reflect.ValueOf(&s).Elem(), 0)
	figures, err := Figures(&s)
	if err != nil {
		t.Fatal(err)
	}
	if len(figures) < 100 {
		t.Fatalf("only %d figures: the filler did not reach the summary's fields", len(figures))
	}
	patterns := FigurePatterns([]string{"x"})
	for path := range figures {
		if !anyPatternMatches(patterns, strings.Split(path, ".")) {
			t.Errorf("figure %s matches no pattern", path)
		}
	}
}

// fill gives every pointer a value, every map the key "x" and every slice
// one element, three levels of nesting of the same type at most.
func fill(v reflect.Value, depth int) {
	if depth > 12 {
		return
	}
	switch v.Kind() {
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		fill(v.Elem(), depth+1)
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				fill(v.Field(i), depth+1)
			}
		}
	case reflect.Map:
		m := reflect.MakeMap(v.Type())
		e := reflect.New(v.Type().Elem()).Elem()
		fill(e, depth+1)
		if v.Type().Key().Kind() == reflect.String {
			m.SetMapIndex(reflect.ValueOf("x").Convert(v.Type().Key()), e)
			v.Set(m)
		}
	case reflect.Slice:
		sl := reflect.MakeSlice(v.Type(), 1, 1)
		fill(sl.Index(0), depth+1)
		v.Set(sl)
	case reflect.Float32, reflect.Float64:
		v.SetFloat(1)
	case reflect.Int, reflect.Int64, reflect.Int32:
		v.SetInt(1)
	case reflect.Bool:
		v.SetBool(true)
	}
}
