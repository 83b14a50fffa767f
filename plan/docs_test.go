package plan

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/pflag"

	"github.com/inferload/inferload/protocol"
)

var docPath = filepath.Join("..", "docs", "plan.md")

// docRow matches a field row of docs/plan.md's table: | `path` | `--flag` | ...
var docRow = regexp.MustCompile("^\\| `([a-z0-9_.]+)` \\| `--([a-z0-9-]+)` \\|")

func readDoc(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile(docPath)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// TestDocsListEveryField fails when a plan field or a flag is added,
// renamed or removed without docs/plan.md following.
func TestDocsListEveryField(t *testing.T) {
	t.Parallel()
	docFlags := map[string]string{} // path -> flag
	for _, line := range strings.Split(readDoc(t), "\n") {
		if m := docRow.FindStringSubmatch(line); m != nil {
			if _, dup := docFlags[m[1]]; dup {
				t.Errorf("docs/plan.md lists %s twice", m[1])
			}
			docFlags[m[1]] = m[2]
		}
	}
	fs := pflag.NewFlagSet("run", pflag.ContinueOnError)
	fl := BindFlags(fs)
	codeFlags := map[string]string{}
	for _, b := range fl.bindings {
		codeFlags[b.path] = b.flag
	}
	for _, path := range FieldPaths() {
		if _, ok := docFlags[path]; !ok {
			t.Errorf("plan field %s is not documented in docs/plan.md", path)
		}
		if _, ok := codeFlags[path]; !ok {
			t.Errorf("plan field %s has no flag", path)
		}
	}
	if diff := cmp.Diff(codeFlags, docFlags); diff != "" {
		t.Errorf("docs/plan.md rows (path -> flag) differ from the code (-code +doc):\n%s", diff)
	}
	documented := map[string]bool{}
	for _, flag := range docFlags {
		documented[flag] = true
	}
	fs.VisitAll(func(f *pflag.Flag) {
		if !documented[f.Name] {
			t.Errorf("flag --%s is not documented in docs/plan.md", f.Name)
		}
	})
}

// TestDocsExamples checks that the doc's YAML examples are the tested
// files in testdata/ and that its command line builds the same plan as
// the first of them.
func TestDocsExamples(t *testing.T) {
	t.Parallel()
	doc := readDoc(t)
	blocks := regexp.MustCompile("(?s)```yaml\n(.*?)```").FindAllStringSubmatch(doc, -1)
	files := []string{"closed.yaml", "open.yaml", "classes.yaml"}
	if len(blocks) != len(files) {
		t.Fatalf("docs/plan.md has %d YAML examples, want %d", len(blocks), len(files))
	}
	for i, file := range files {
		want, err := os.ReadFile(filepath.Join("testdata", file))
		if err != nil {
			t.Fatal(err)
		}
		if blocks[i][1] != string(want) {
			t.Errorf("docs/plan.md example %d differs from testdata/%s", i+1, file)
		}
	}
	sh := regexp.MustCompile("(?s)```sh\n(.*?)```").FindStringSubmatch(doc)
	if sh == nil {
		t.Fatal("docs/plan.md has no command-line example")
	}
	args := shellWords(strings.ReplaceAll(sh[1], "\\\n", " "))
	if len(args) < 2 || args[0] != "inferload" || args[1] != "run" {
		t.Fatalf("command-line example is not inferload run: %q", args)
	}
	fromFlags, err := Load("", newFlags(t, args[2:]...), nil)
	if err != nil {
		t.Fatalf("command-line example: %v", err)
	}
	fromFile, err := Load(filepath.Join("testdata", "closed.yaml"), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	// Flags give JSON numbers, the file YAML ints: compare bodies as sent.
	flagBody, _ := json.Marshal(fromFlags.Target.Body)
	fileBody, _ := json.Marshal(fromFile.Target.Body)
	if string(flagBody) != string(fileBody) {
		t.Errorf("body from flags %s, from file %s", flagBody, fileBody)
	}
	fromFlags.Target.Body, fromFile.Target.Body = nil, nil
	if diff := cmp.Diff(fromFile, fromFlags, ignoreOrigin); diff != "" {
		t.Errorf("command-line example and closed.yaml differ (-file +flags):\n%s", diff)
	}
}

// shellWords splits a command line at spaces outside single quotes.
func shellWords(s string) []string {
	var words []string
	var cur strings.Builder
	inWord, quoted := false, false
	for _, r := range s {
		switch {
		case r == '\'':
			quoted, inWord = !quoted, true
		case !quoted && (r == ' ' || r == '\n' || r == '\t'):
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
			}
			inWord = false
		default:
			cur.WriteRune(r)
			inWord = true
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words
}

// TestDocsListEveryAPI fails when an API the plan accepts is missing from
// docs/plan.md's target.api row, or the row names one it refuses.
func TestDocsListEveryAPI(t *testing.T) {
	t.Parallel()
	var row string
	for _, line := range strings.Split(readDoc(t), "\n") {
		if strings.HasPrefix(line, "| `target.api` |") {
			row = line
		}
	}
	if row == "" {
		t.Fatal("docs/plan.md has no target.api row")
	}
	for _, api := range protocol.APIs() {
		if !strings.Contains(row, "`"+string(api)+"`") {
			t.Errorf("docs/plan.md's target.api row does not name %s", api)
		}
		if !knownAPI(string(api)) {
			t.Errorf("the plan refuses %s, which protocol speaks", api)
		}
	}
	if knownAPI("grpc") {
		t.Error("the plan accepts an API protocol does not speak")
	}
}
