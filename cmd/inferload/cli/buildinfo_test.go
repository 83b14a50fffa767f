package cli

import (
	"bytes"
	"runtime/debug"
	"testing"
)

// TestVersion: a tagged install prints its tag, a build from a checkout
// its commit (dirty when it had uncommitted changes), and a build with no
// record of either "dev"; --version adds the commit, its time and Go.
func TestVersion(t *testing.T) {
	t.Parallel()
	vcs := func(rev, modified, when string) []debug.BuildSetting {
		return []debug.BuildSetting{{Key: "vcs.revision", Value: rev}, {Key: "vcs.modified", Value: modified}, {Key: "vcs.time", Value: when}}
	}
	tests := []struct {
		name       string
		bi         debug.BuildInfo
		want, line string
	}{
		{"go install at a tag", debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v0.4.0"}},
			"v0.4.0", "v0.4.0 go1.26.8"},
		{"checkout, clean", debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "(devel)"}, Settings: vcs("027c662e7f45aa11bb22", "false", "2026-12-04T22:42:42Z")},
			"devel-027c662e7f45", "devel-027c662e7f45 (commit 027c662e7f45, 2026-12-04T22:42:42Z) go1.26.8"},
		{"checkout, dirty", debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: vcs("abc", "true", "")},
			"devel-abc-dirty", "devel-abc-dirty (commit abc)"},
		{"go run", debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "(devel)"}},
			"dev", "dev go1.26.8"},
	}
	for _, tt := range tests {
		if got := versionOf(&tt.bi); got != tt.want {
			t.Errorf("%s: version %q, want %q", tt.name, got, tt.want)
		}
		if got := versionLine(&tt.bi); got != tt.line {
			t.Errorf("%s: --version line %q, want %q", tt.name, got, tt.line)
		}
	}
}

// TestVersionFlag: --version prints the State's version line.
func TestVersionFlag(t *testing.T) {
	t.Parallel()
	var out, errb bytes.Buffer
	st := &State{Args: []string{"--version"}, Stdout: &out, Stderr: &errb, Version: "v9", VersionLine: "v9 (commit abc) go1.26.8"}
	if code := Main(st); code != ExitOK || out.String() != "inferload version v9 (commit abc) go1.26.8\n" {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, out.String(), errb.String())
	}
}
