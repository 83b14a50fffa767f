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
		// Said in plain words, not "samples back TTFT p99".
		{&record.Validity{Valid: true, Percentiles: map[string]string{"ttft": "p99", "e2e": "p99"}}, "valid   (enough requests to trust TTFT and E2E percentiles up to P99)"},
		{&record.Validity{Valid: true, Percentiles: map[string]string{"ttft": "p999", "e2e": "p95"}}, "valid   (enough requests to trust TTFT percentiles up to P99.9, E2E percentiles up to P95)"},
		{&record.Validity{Valid: true, Percentiles: map[string]string{"ttft": "none", "e2e": "none"}}, "too few requests to trust any TTFT or E2E percentile"},
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

func TestSummaryShowsChains(t *testing.T) {
	t.Parallel()
	s := &record.Summary{Chains: map[string]*record.ChainSummary{"rag": {Chains: 10, Failed: 1,
		E2E: record.Stats{P50: 120, P99: 300},
		Steps: []record.ChainStepSummary{{Name: "embed", Started: 10, Latency: record.Stats{P50: 5, P99: 9}, ShareOfE2E: 0.04},
			{Name: "retrieve", Started: 10, Failed: 1, Latency: record.Stats{P50: 20, P99: 80}, ShareOfE2E: 0.16}}}}}
	var b bytes.Buffer
	if err := WriteSummary(&b, s); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Chain rag: 10 chains, 1 failed", "retrieve", "16.0%"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, b.String())
		}
	}
}
