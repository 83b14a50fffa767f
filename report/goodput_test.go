package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/inferload/inferload/record"
)

// TestWriteGoodput checks when the goodput and compute rows appear.
func TestWriteGoodput(t *testing.T) {
	t.Parallel()
	slo := record.SLO{TTFTMs: 2000}
	withSLO := &record.Summary{
		Goodput: record.Goodput{SLO: slo, RequestsPerS: 1.5, Attainment: 0.75},
		Classes: map[string]*record.Breakdown{
			"chat": {Goodput: record.Goodput{SLO: slo, Attainment: 1}},
			"doc":  {Goodput: record.Goodput{SLO: slo, Attainment: 0.5}},
		},
		Compute: &record.Compute{OfferedFLOPPerS: 2e15, AchievedFLOPPerS: 1e15, AchievedPrefillFLOPPerS: 8e14, AchievedDecodeFLOPPerS: 2e14},
	}
	tests := []struct {
		name    string
		s       *record.Summary
		want    []string
		notWant []string
	}{
		// An SLO shows goodput overall and per class, and a model the FLOP/s.
		{"slo and model", withSLO,
			[]string{"Goodput", "1.50 req/s   75.0 % met SLO   chat 100.0 %   doc 50.0 %", "offered 2e+15 FLOP/s   achieved 1e+15 FLOP/s (prefill 8e+14, decode 2e+14)"}, nil},
		// Without an SLO goodput is throughput, and without a model no estimate: neither row.
		{"neither", &record.Summary{}, nil, []string{"Goodput", "Compute"}},
	}
	for _, tt := range tests {
		var b bytes.Buffer
		writeGoodput(&b, tt.s)
		for _, w := range tt.want {
			if !strings.Contains(b.String(), w) {
				t.Errorf("%s: output lacks %q:\n%s", tt.name, w, b.String())
			}
		}
		for _, w := range tt.notWant {
			if strings.Contains(b.String(), w) {
				t.Errorf("%s: output has %q:\n%s", tt.name, w, b.String())
			}
		}
	}
}
