package capacity

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestNoGoroutines: capacity plans on virtual time, in the caller's
// goroutine. `make test` runs it without the race detector for that
// reason (the detector finds nothing in one goroutine and made the
// package's long fits take 9 minutes); a goroutine or a sync primitive
// here must put it back under -race, and this test says so.
func TestNoGoroutines(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	checked := 0
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		checked++
		for _, imp := range f.Imports {
			if p, _ := strconv.Unquote(imp.Path.Value); p == "sync" || p == "sync/atomic" {
				t.Errorf("%s imports %s: capacity is single-goroutine; run it under -race again (Makefile) before adding concurrency", name, p)
			}
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if g, ok := n.(*ast.GoStmt); ok {
				t.Errorf("%s: a go statement: capacity is single-goroutine; run it under -race again (Makefile) before adding concurrency", fset.Position(g.Pos()))
			}
			return true
		})
	}
	if checked == 0 {
		t.Fatal("no capacity source file was read")
	}
}
