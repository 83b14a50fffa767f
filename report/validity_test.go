package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/inferload/inferload/record"
)

func TestSummaryShowsValidity(t *testing.T) {
	t.Parallel()
	tests := []struct {
		v    *record.Validity
		want string // in the table; "" means no Validity row
	}{
		{nil, ""}, // staged runs carry none
		{&record.Validity{Valid: true, Percentiles: map[string]string{"ttft": "p99", "e2e": "p99"}}, "valid   (samples back TTFT p99, E2E p99)"},
		{&record.Validity{Reasons: []string{"achieved load 12 users is 25% below the intended 16"}, Percentiles: map[string]string{"ttft": "p90", "e2e": "p90"}},
			"NOT VALID: achieved load 12 users is 25% below the intended 16"},
	}
	for _, tt := range tests {
		var b bytes.Buffer
		if err := WriteSummary(&b, &record.Summary{Validity: tt.v}); err != nil {
			t.Fatal(err)
		}
		got := b.String()
		if tt.want == "" && strings.Contains(got, "Validity") || tt.want != "" && !strings.Contains(got, tt.want) {
			t.Errorf("validity %+v: table\n%s\nwant %q", tt.v, got, tt.want)
		}
	}
}
