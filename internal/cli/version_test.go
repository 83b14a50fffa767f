package cli

import (
	"runtime/debug"
	"testing"
)

// TestVersionOf: a tagged or pseudo-versioned install prints its version;
// a build in a checkout prints the commit it was built from (and whether
// the tree was modified) instead of a bare "dev".
func TestVersionOf(t *testing.T) {
	t.Parallel()
	vcs := func(kv ...string) []debug.BuildSetting {
		var out []debug.BuildSetting
		for i := 0; i+1 < len(kv); i += 2 {
			out = append(out, debug.BuildSetting{Key: kv[i], Value: kv[i+1]})
		}
		return out
	}
	tests := []struct {
		name string
		bi   debug.BuildInfo
		want string
	}{
		{"go install @v1.4.0", debug.BuildInfo{Main: debug.Module{Version: "v1.4.0"}}, "v1.4.0"},
		{"go install @commit", debug.BuildInfo{Main: debug.Module{Version: "v0.0.0-20261204173000-0123abcd4567"}}, "v0.0.0-20261204173000-0123abcd4567"},
		{"go build in a checkout", debug.BuildInfo{Main: debug.Module{Version: "(devel)"},
			Settings: vcs("vcs.revision", "0123abcd4567890fedcba", "vcs.time", "2026-12-04T17:30:00Z", "vcs.modified", "true")},
			"dev (commit 0123abcd4567, 2026-12-04, modified)"},
		{"clean checkout", debug.BuildInfo{Main: debug.Module{Version: "(devel)"},
			Settings: vcs("vcs.revision", "0123abcd4567890fedcba", "vcs.time", "2026-12-04T17:30:00Z", "vcs.modified", "false")},
			"dev (commit 0123abcd4567, 2026-12-04)"},
		{"go run, no VCS stamp", debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, "dev"},
	}
	for _, tt := range tests {
		if got := versionOf(&tt.bi); got != tt.want {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.want)
		}
	}
}
