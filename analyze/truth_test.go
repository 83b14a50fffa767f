package analyze

import (
	"testing"
)

// TestTruth runs the truth suite (TRUTH.md): every constructed scenario's
// verdict must match its truth, and compare must meet its targets over 20
// pairs per planted change (the full 40 are `inferload truth`'s).
func TestTruth(t *testing.T) {
	t.Parallel()
	r := Truth(TruthOptions{Pairs: 20})
	for _, row := range r.Rows {
		if !row.Match {
			t.Errorf("%s: truth %q, verdict %q", row.Scenario, row.Truth, row.Verdict)
		}
	}
	if !r.OK() {
		t.Errorf("compare rates miss their targets: %+v", r.Compare)
	}
}
