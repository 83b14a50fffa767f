package analyze

import (
	"strings"
	"testing"

	"github.com/inferload/inferload/observe"
)

func TestScrapeWarnings(t *testing.T) {
	t.Parallel()
	const src = "http://127.0.0.1:8080/metrics"
	gap := observe.Sample{Source: src, Gap: true, Error: "HTTP 501 Not Implemented"}
	empty := observe.Sample{Source: src, Kind: "vllm"}
	valued := observe.Sample{Source: src, Kind: "vllm", Values: map[string]float64{"queue_depth": 0}}
	client := observe.Sample{Source: "client", Values: map[string]float64{"cpu_pct": 3}}
	tests := []struct {
		name    string
		samples []observe.Sample
		want    string // "" means no warning
	}{
		// llama.cpp without --metrics: every scrape a 501.
		{"never answered", []observe.Sample{client, gap, gap, gap}, "never answered in 3 tries (HTTP 501 Not Implemented)"},
		// A wrong --server-kind: answers, but no series derived.
		{"empty map", []observe.Sample{gap, empty, empty}, "answered 2 times but none of its metrics matched"},
		// One good sample is enough: gaps in between are charted, not warned.
		{"some values", []observe.Sample{gap, empty, valued}, ""},
		// The client's own samples are no scrape source.
		{"client only", []observe.Sample{client}, ""},
	}
	for _, tt := range tests {
		got := scrapeWarnings(tt.samples)
		switch {
		case tt.want == "" && len(got) != 0:
			t.Errorf("%s: warnings %q, want none", tt.name, got)
		case tt.want != "" && (len(got) != 1 || !strings.Contains(got[0], tt.want)):
			t.Errorf("%s: warnings %q, want one containing %q", tt.name, got, tt.want)
		}
	}
}
