package archtest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// worldRule bans a package's identifiers (pkgPath.Name) from library code:
// the outside world reaches the library only through the CLI's State
// (STYLE.md, "Inject the world"), so tests run commands in process and a
// library user decides what a run may touch.
type worldRule struct {
	pkgPath string   // standard package, e.g. "os"
	names   []string // banned identifiers
	why     string
	// allowed are the library files that may use them, as
	// "package/file.go", or "package/" for a whole package.
	allowed []string
}

var worldRules = []worldRule{
	// The environment, the process's arguments, its standard streams and
	// its exit are the CLI's (cmd/inferload/cli.State); a library reading them
	// could not be run twice in one process with different settings.
	{pkgPath: "os", names: []string{"Getenv", "LookupEnv", "Environ", "Setenv", "Unsetenv", "Exit", "Args", "Stdin", "Stdout", "Stderr"},
		why: "the environment, arguments, standard streams and exit come in through cmd/inferload/cli.State"},
	// Figures, verdicts, plans and schedules never read the clock: they
	// are functions of records and the plan, so a rebuild gives the same
	// bytes. What measures or serves owns a clock: the engine's is
	// injectable (engine.Clock; the runner's comes from Options.Clock),
	// protocol stamps each token on the monotonic clock as it arrives,
	// observe samples on the run clock, the simulator and the live
	// exporters serve in real time.
	{pkgPath: "time", names: []string{"Now", "Since", "Until"},
		why:     "only the packages that measure or serve read the clock; the run's comes from experiment.Options.Clock",
		allowed: []string{"engine/clock.go", "engine/pace.go", "protocol/", "observe/", "sim/", "live/"}},
}

// TestLibraryLeavesTheWorldToTheCLI checks every non-test file of every
// library package against worldRules.
func TestLibraryLeavesTheWorldToTheCLI(t *testing.T) {
	for _, p := range listLibraryFiles(t) {
		for _, f := range p.GoFiles {
			rel := strings.TrimPrefix(strings.TrimPrefix(p.ImportPath, module), "/") + "/" + f
			src, err := parser.ParseFile(token.NewFileSet(), filepath.Join(p.Dir, f), nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			for _, v := range worldViolations(rel, src) {
				t.Error(v)
			}
		}
	}
}

// TestWorldViolationsFound proves the checker sees a banned use, also
// under a renamed import, and honours the allowances.
func TestWorldViolationsFound(t *testing.T) {
	t.Parallel()
	src := `package x
import (
	clock "time"
	"os"
)
func f() { _ = os.Getenv("K"); _ = clock.Now(); _ = os.ReadFile }
`
	cases := []struct {
		file string
		want int
	}{
		// A library file: os.Getenv and the renamed time.Now are both found,
		// os.ReadFile is not banned.
		{"record/x.go", 2},
		// An allowed package may read the clock, not the environment.
		{"protocol/x.go", 1},
	}
	for _, tc := range cases {
		f, err := parser.ParseFile(token.NewFileSet(), tc.file, src, 0)
		if err != nil {
			t.Fatal(err)
		}
		if got := worldViolations(tc.file, f); len(got) != tc.want {
			t.Errorf("%s: %q, want %d violations", tc.file, got, tc.want)
		}
	}
}

// worldViolations lists the banned uses in one parsed file, rel being its
// path relative to the module.
func worldViolations(rel string, f *ast.File) []string {
	names := map[string]string{} // local import name → package path
	for _, imp := range f.Imports {
		path, _ := strconv.Unquote(imp.Path.Value)
		local := path[strings.LastIndex(path, "/")+1:]
		if imp.Name != nil {
			local = imp.Name.Name
		}
		names[local] = path
	}
	var out []string
	ast.Inspect(f, func(n ast.Node) bool {
		sel, ok := n.(*ast.SelectorExpr)
		if !ok {
			return true
		}
		id, ok := sel.X.(*ast.Ident)
		if !ok || id.Obj != nil { // id.Obj set: a local variable, not a package
			return true
		}
		for _, r := range worldRules {
			if names[id.Name] != r.pkgPath || !slices.Contains(r.names, sel.Sel.Name) || allowedFile(rel, r.allowed) {
				continue
			}
			out = append(out, fmt.Sprintf("%s uses %s.%s: %s", rel, r.pkgPath, sel.Sel.Name, r.why))
		}
		return true
	})
	return out
}

func allowedFile(rel string, allowed []string) bool {
	for _, a := range allowed {
		if rel == a || (strings.HasSuffix(a, "/") && strings.HasPrefix(rel, a)) {
			return true
		}
	}
	return false
}

// libraryFiles is the part of `go list -json` the world rules read.
type libraryFiles struct {
	ImportPath, Dir string
	GoFiles         []string
}

// listLibraryFiles lists the non-test Go files of every library package
// (not the command, the CLI or developer tools).
func listLibraryFiles(t *testing.T) []libraryFiles {
	t.Helper()
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command is needed to list the module's files: %v", err)
	}
	cmd := exec.Command(gobin, "list", "-json=ImportPath,Dir,GoFiles", module+"/...")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.Bytes())
	}
	var pkgs []libraryFiles
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p libraryFiles
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("reading go list output: %v", err)
		}
		if isLibrary(p.ImportPath) {
			pkgs = append(pkgs, p)
		}
	}
	if len(pkgs) < 10 {
		t.Fatalf("only %d library packages listed: is the test running inside the module?", len(pkgs))
	}
	return pkgs
}
