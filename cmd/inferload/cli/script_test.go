package cli

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/inferload/inferload/sim"
)

// TestScripts runs the CLI's behaviour as txtar scripts,
// testdata/script/*.txtar: each script runs the real `inferload` command
// (this test binary under that name, see TestMain) and checks its exit
// code, its output and the files it wrote. Besides testscript's own
// commands (docs: github.com/rogpeppe/go-internal/testscript) scripts have
//
//	sim                    start a simulated server on 127.0.0.1 (port 0,
//	                       20× speed-up) for this script; $SIM_URL is its
//	                       OpenAI base URL, $SIM_ROOT its root (the native
//	                       APIs' base), $SIM_MODEL its model; it closes
//	                       when the script ends
//	exits CODE CMD ARGS…   run CMD and require exit code CODE exactly
//	                       (stdout and stderr can then be checked)
//	rundir VAR DIR         require exactly one run directory under DIR and
//	                       set $VAR to it
//	[!] greptree TEXT DIR  whether some file under DIR contains TEXT (with
//	                       !, that none does: the failure names the file)
//
// Run them with `go test ./cmd/inferload/cli/ -run Scripts`; add -v to see
// each script's log. Expected outputs are in the scripts themselves.
func TestScripts(t *testing.T) {
	t.Parallel()
	testscript.Run(t, testscript.Params{
		Dir: "testdata/script",
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"sim":      scriptSim,
			"exits":    scriptExits,
			"rundir":   scriptRunDir,
			"greptree": scriptGrepTree,
		},
	})
}

func scriptSim(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 0 {
		ts.Fatalf("usage: sim")
	}
	srv, url, err := sim.Start(sim.Config{Seed: 1, Speedup: 20}, "127.0.0.1:0")
	ts.Check(err)
	ts.Defer(func() { srv.Close() })
	ts.Setenv("SIM_URL", url)
	ts.Setenv("SIM_ROOT", strings.TrimSuffix(url, "/v1")) // the native APIs' base
	ts.Setenv("SIM_MODEL", srv.Profile().Model)
}

func scriptExits(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: exits CODE CMD ARGS...")
	}
	want, err := strconv.Atoi(args[0])
	ts.Check(err)
	got := 0
	if err := ts.Exec(args[1], args[2:]...); err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			ts.Fatalf("%s: %v", args[1], err)
		}
		got = ee.ExitCode()
	}
	if got != want {
		ts.Fatalf("%s exited %d, want %d", args[1], got, want)
	}
}

func scriptRunDir(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: rundir VAR DIR")
	}
	entries, err := os.ReadDir(ts.MkAbs(args[1]))
	ts.Check(err)
	var dirs []string
	for _, e := range entries {
		if e.IsDir() {
			dirs = append(dirs, filepath.Join(ts.MkAbs(args[1]), e.Name()))
		}
	}
	if len(dirs) != 1 {
		ts.Fatalf("%d run directories under %s, want 1: %v", len(dirs), args[1], dirs)
	}
	ts.Setenv(args[0], dirs[0])
}

func scriptGrepTree(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 2 {
		ts.Fatalf("usage: [!] greptree PATTERN DIR")
	}
	pattern := []byte(args[0])
	var hits []string
	files := 0
	err := filepath.WalkDir(ts.MkAbs(args[1]), func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		files++
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if bytes.Contains(b, pattern) {
			hits = append(hits, path)
		}
		return nil
	})
	ts.Check(err)
	if files == 0 {
		ts.Fatalf("no files under %s", args[1])
	}
	switch {
	case neg && len(hits) > 0:
		ts.Fatalf("%q found in %v", args[0], hits)
	case !neg && len(hits) == 0:
		ts.Fatalf("%q in none of the %d files under %s", args[0], files, args[1])
	}
}
