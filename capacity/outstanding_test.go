package capacity

import (
	"testing"

	"github.com/inferload/inferload/record"
)

// Four closed-loop users each send 1.7 s requests back to back from
// 0.3 s; a level's measured window is [2 s, 5.5 s). The client had
// exactly 4 out all through it, and the count says so; summing the whole
// latencies of the requests sent inside the window (the old count) reads
// 5.8, the last requests' 1.6 s past the window's end included.
func TestOutstandingInWindow(t *testing.T) {
	t.Parallel()
	const lUS, fromUS, toUS = 1_700_000, 2_000_000, 5_500_000
	var out outstanding
	var measuredUS int64
	for range 4 {
		for send := int64(300_000); send < 8_000_000; send += lUS {
			out.add(&record.Result{SendUS: send, E2EUS: lUS})
			if send >= fromUS && send < toUS {
				measuredUS += lUS
			}
		}
	}
	if got := out.mean(fromUS, toUS); got != 4 {
		t.Errorf("outstanding %.3f, want 4 (every user had one out all through the window)", got)
	}
	if old := float64(measuredUS) / (toUS - fromUS); old <= 4.5 {
		t.Fatalf("the old count is %.2f: the case no longer shows its overcount", old)
	}
	// Half the window idle: 2 on average; an empty window: 0.
	var half outstanding
	for range 4 {
		half.add(&record.Result{SendUS: 0, E2EUS: 1_000_000})
	}
	if got := half.mean(0, 2_000_000); got != 2 {
		t.Errorf("half-busy window: %.3f out, want 2", got)
	}
	if got := half.mean(5, 5); got != 0 {
		t.Errorf("empty window: %.3f out, want 0", got)
	}
}
