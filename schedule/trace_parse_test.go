package schedule

import "testing"

// TestReadTraceTokens: a recorded token count is kept when present and
// 0 to maxTraceTokens; otherwise the error names the field and dst is
// left as it was.
func TestReadTraceTokens(t *testing.T) {
	t.Parallel()
	n := func(v int) *int { return &v }
	tests := []struct {
		v       *int
		want    int // dst after the call (it starts at 7)
		wantErr bool
	}{
		// Absent: refused.
		{nil, 7, true},
		// Negative: refused.
		{n(-1), 7, true},
		// Zero and the bound itself are counts.
		{n(0), 0, false},
		{n(maxTraceTokens), maxTraceTokens, false},
		// One past the bound: refused.
		{n(maxTraceTokens + 1), 7, true},
	}
	for _, tt := range tests {
		dst := 7
		err := readTraceTokens("field x.in", tt.v, &dst)
		if (err != nil) != tt.wantErr || dst != tt.want {
			t.Errorf("%v: dst %d err %v, want %d (error: %v)", tt.v, dst, err, tt.want, tt.wantErr)
		}
		if err != nil && err.Error() != "field x.in: missing, negative or above 1000000000" {
			t.Errorf("error %q does not name the field and its bound", err)
		}
	}
}
