package main

import (
	"strings"
	"testing"

	"github.com/inferload/inferload/internal/enginetest"
	"github.com/inferload/inferload/record"
)

// TestTablesCountVerdicts: reruns built so 9 of 10 hold at the answer
// and 8 of 10 break above it are printed as 9/10 and 8/10, in both the
// configuration's table and the summary row.
func TestTablesCountVerdicts(t *testing.T) {
	t.Parallel()
	o := &outcome{Mode: record.ModeOpen, Config: enginetest.Llama{Model: "tiny", Slots: 4, Threads: 1}, Workload: workloads["tiny"],
		SLO: record.SLO{TTFTMs: 100, Share: 0.9}, Capacity: &record.Capacity{Found: true, Load: 8, Reason: "capacity 8 requests/s"}}
	for i := range 10 {
		at, above := rerun{Load: 8, TTFTP90MS: 60, Samples: 100, Valid: true, Confident: i < 7}, rerun{Load: 10, TTFTP90MS: 300, Samples: 125}
		if i == 0 {
			at.TTFTP90MS = 140 // the one rerun at the answer that broke
		}
		if i < 2 {
			above.TTFTP90MS = 90 // two above the answer that still held
		}
		o.AtAnswer, o.Above = append(o.AtAnswer, at), append(o.Above, above)
	}
	cfg, sum := configTable(o), summaryTable([]*outcome{o})
	for _, want := range []string{"**9/10** at 8 requests/s", "rule passes 7/10", "**8/10** at 10 requests/s", "invalid 10)", "100–125"} {
		if !strings.Contains(cfg, want) {
			t.Errorf("configuration table lacks %q:\n%s", want, cfg)
		}
	}
	if want := "| tiny, 4 slots, 1 thread | 0.00 ms | 0.00% | TTFT p90 ≤ 100ms | 8 requests/s | 9/10 | 8/10 |"; !strings.Contains(sum, want) {
		t.Errorf("summary lacks %q:\n%s", want, sum)
	}
}
