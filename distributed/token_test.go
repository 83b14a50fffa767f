package distributed

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReadToken: a token file is read bounded (a key file's limit, so
// /dev/zero is refused, not read until memory runs out), trimmed, never
// empty; without a file the environment's value is the token.
func TestReadToken(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	tests := []struct {
		name, path, env, want, err string
	}{
		{"file, trimmed", write("tok", "  abc123\n"), "ignored", "abc123", ""},
		{"environment", "", " from-env\n", "from-env", ""},
		{"empty file", write("empty", "\n"), "", "", "is empty"},
		{"endless file", "/dev/zero", "", "", "larger than 64 KiB"},
		{"missing file", filepath.Join(dir, "nope"), "", "", "no such file"},
	}
	for _, tt := range tests {
		got, err := ReadToken(context.Background(), tt.path, tt.env)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("%s: %q, %v; want an error saying %q", tt.name, got, err, tt.err)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("%s: %q, %v; want %q", tt.name, got, err, tt.want)
		}
	}
}
