package report

import (
	"fmt"
	"sort"

	"github.com/inferload/inferload/record"
)

// htmlBreakdownHead are the columns of the per-class and per-bucket tables.
var htmlBreakdownHead = []string{"", "requests", "failed", "TTFT p50", "TTFT p99", "ITL p50", "ITL p99", "E2E p50", "E2E p99", "output tok/s"}

// breakdownSection shows the percentiles of each request class and each
// prompt-length bucket, so a mixed run shows what each kind of traffic got.
// A run with only the default class and one used bucket has nothing to add
// to the overall table, and gets no section.
func breakdownSection(in *HTMLInput) *section {
	s := in.Summary
	sec := &section{ID: "breakdown", Title: "By class and input length",
		Help: "Each row has its own histograms: its percentiles are exact for it, never averaged. Short requests' TTFT P99 rising next to long ones shows head-of-line blocking by long prefills."}
	if t, ok := htmlClassTable(s.Classes); ok {
		sec.Tables = append(sec.Tables, t)
	}
	if t, ok := htmlBucketTable(s.InputBuckets); ok {
		sec.Tables = append(sec.Tables, t)
	}
	if len(sec.Tables) == 0 {
		return nil
	}
	return sec
}

func htmlClassTable(classes map[string]*record.Breakdown) (table, bool) {
	if len(classes) == 0 || (len(classes) == 1 && classes["default"] != nil) {
		return table{}, false
	}
	names := make([]string, 0, len(classes))
	for n := range classes {
		names = append(names, n)
	}
	sort.Strings(names)
	t := table{Caption: "per request class, milliseconds", Head: htmlBreakdownHeadAs("class")}
	for _, n := range names {
		if b := classes[n]; b != nil {
			t.Rows = append(t.Rows, htmlBreakdownRow(n, b))
		}
	}
	return t, true
}

func htmlBucketTable(buckets []record.InputBucket) (table, bool) {
	t := table{Caption: "per prompt length (tokens sent), milliseconds", Head: htmlBreakdownHeadAs("input tokens")}
	for _, b := range buckets {
		if b.Requests.Total > 0 {
			t.Rows = append(t.Rows, htmlBreakdownRow(b.Label, &b.Breakdown))
		}
	}
	return t, len(t.Rows) > 1
}

func htmlBreakdownHeadAs(name string) []string {
	h := append([]string{}, htmlBreakdownHead...)
	h[0] = name
	return h
}

func htmlBreakdownRow(name string, b *record.Breakdown) []string {
	m := b.Metrics
	return []string{name, fmt.Sprintf("%d", b.Requests.Succeeded+b.Requests.Failed), fmt.Sprintf("%.2f %%", 100*b.FailureRate),
		ms(m.TTFT.P50), ms(m.TTFT.P99), ms(m.ITL.P50), ms(m.ITL.P99), ms(m.E2E.P50), ms(m.E2E.P99),
		fmt.Sprintf("%.1f", b.Throughput.OutputTokensPerS)}
}
