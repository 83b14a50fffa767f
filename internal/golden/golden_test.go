package golden

import (
	"os"
	"path/filepath"
	"testing"
)

// recorder is a testing.TB that keeps whether the check failed instead of
// failing the test that runs it.
type recorder struct {
	testing.TB
	failed bool
}

func (r *recorder) Helper()               {}
func (r *recorder) Errorf(string, ...any) { r.failed = true }
func (r *recorder) Fatal(...any)          { r.failed = true }
func (r *recorder) Fatalf(string, ...any) { r.failed = true }

// TestCheck: the same bytes pass; other bytes or a missing file fail;
// with -update the file is written and then passes.
func TestCheck(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "out.golden")
	if err := os.WriteFile(path, []byte("a\nb\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, path, got string
		fail            bool
	}{
		{"same", path, "a\nb\n", false},
		{"differs", path, "a\nc\n", true},
		{"missing", filepath.Join(dir, "none.golden"), "a\n", true},
	}
	for _, tt := range tests {
		r := &recorder{TB: t}
		Check(r, tt.path, []byte(tt.got))
		if r.failed != tt.fail {
			t.Errorf("%s: failed %v, want %v", tt.name, r.failed, tt.fail)
		}
	}
	*update = true
	defer func() { *update = false }()
	fresh := filepath.Join(dir, "fresh.golden")
	Check(t, fresh, []byte("new\n"))
	*update = false
	r := &recorder{TB: t}
	Check(r, fresh, []byte("new\n"))
	if r.failed {
		t.Error("a file written with -update does not pass")
	}
}
