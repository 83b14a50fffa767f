package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/inferload/inferload/analyze"
)

func TestWritePrecision(t *testing.T) {
	widths := []analyze.FigureWidth{{Metric: "output_tokens_per_s", Rel: 0.031}, {Metric: "ttft_ms.p50", Rel: 0.082}}
	tests := []struct {
		name  string
		check analyze.PrecisionCheck
		want  string
	}{
		{"met", analyze.PrecisionCheck{Met: true, Runs: 4, Rel: 0.1, Widths: widths},
			"precision: stopped after 4 of at most 10 runs: every watched interval is within ±10.0% of its mean (output_tokens_per_s ±3.1%, ttft_ms.p50 ±8.2%)"},
		{"not met names only the wide figures", analyze.PrecisionCheck{Runs: 10, Rel: 0.05, Widths: widths},
			"precision: NOT met after 10 runs (the most allowed): still wider than ±5.0%: ttft_ms.p50 ±8.2%;"},
		{"nothing watched", analyze.PrecisionCheck{Runs: 10, Rel: 0.05},
			"precision: not met after 10 runs: the runs have none of the watched figures"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			writePrecision(&b, tc.check, 10)
			if !strings.Contains(b.String(), tc.want) {
				t.Errorf("got %q\nwant it to hold %q", b.String(), tc.want)
			}
		})
	}
}
