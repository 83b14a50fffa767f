package cli

import (
	"fmt"
	"runtime/debug"
)

// version names the build in run directories, the live page's metrics and
// `--version`: the module version `go install …@vX` stamps, else the commit
// a build from a checkout records (with "-dirty" for uncommitted changes),
// else "dev" (`go run`, or a build with -buildvcs=false).
func version() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "dev"
	}
	return versionOf(bi)
}

// versionOf is version for a given build's info.
func versionOf(bi *debug.BuildInfo) string {
	if v := bi.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	rev, dirty := "", false
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if rev == "" {
		return "dev"
	}
	v := "devel-" + rev[:min(len(rev), 12)]
	if dirty {
		v += "-dirty"
	}
	return v
}

// versionLine is what `inferload --version` prints after the name: the
// version, then the commit, its time and the Go toolchain where the build
// recorded them, so a bug report says exactly which build ran.
func versionLine(bi *debug.BuildInfo) string {
	line := versionOf(bi)
	var commit, when string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			commit = s.Value[:min(len(s.Value), 12)]
		case "vcs.time":
			when = s.Value
		}
	}
	if commit != "" {
		line += fmt.Sprintf(" (commit %s", commit)
		if when != "" {
			line += ", " + when
		}
		line += ")"
	}
	if bi.GoVersion != "" {
		line += " " + bi.GoVersion
	}
	return line
}
