// Package archtest keeps DESIGN.md's package table true: each package's
// "must not know about" column, where an import can show it, is a rule
// here, checked against the module's real import graph from `go list`.
package archtest

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// module is the module path; rules name packages relative to it.
const module = "github.com/inferload/inferload"

// everyLibraryPackage as a rule's subject means every package of the
// module except the command (cmd/...), the CLI (cmd/inferload/cli) and
// developer tools (internal/tools/...) and test support that starts real
// engines (internal/enginetest): the library a Go user imports.
const everyLibraryPackage = "(every library package)"

// rule is one import rule: the subject package must not depend on the
// module packages in notModule, directly or through another package (a
// back edge through a third package is still a back edge), and must not
// import the standard packages in notStd itself (a standard package
// reached through a dependency is that dependency's business: report
// renders observe's telemetry samples, and observe scrapes over HTTP).
// Only non-test imports count: a test may start an httptest server.
type rule struct {
	subject   string   // package relative to module, or everyLibraryPackage
	design    string   // the DESIGN.md row the rule enforces, quoted
	notModule []string // module packages, relative to module
	notStd    []string // standard-library import paths
}

// rules are DESIGN.md's "must not know about" column as imports. A rule
// is here only if it holds; the ones the tree still breaks are listed in
// the change that added this test, not disabled here.
var rules = []rule{
	// plan decides what a test is, not how it is run or shown: no
	// engine (it feeds the engine; the engine never feeds it), no
	// experiment runner, no renderer, no live sink. (It reads the
	// schedule's and the protocol's defaults, each defined once below
	// both of the packages that apply it.)
	{subject: "plan", design: "plan ──► schedule ─► engine; plan | … | HTTP, reports",
		notModule: []string{"engine", "experiment", "report", "live", "cmd/inferload/cli"}},
	// workload builds request specs; when they are sent (schedule), how
	// (protocol, engine) and how results look (report) are not its concern.
	{subject: "workload", design: "workload | … | when or how a request is sent",
		notModule: []string{"schedule", "protocol", "engine", "report", "live", "experiment"},
		notStd:    []string{"net", "net/http"}},
	// schedule says when; what is sent (workload) and how (protocol,
	// engine) are not its concern, nor are renderers.
	{subject: "schedule", design: "schedule | … | what is sent",
		notModule: []string{"workload", "protocol", "engine", "report", "live", "experiment"},
		notStd:    []string{"net", "net/http"}},
	// protocol speaks one API; scheduling and statistics live elsewhere.
	{subject: "protocol", design: "protocol | … | scheduling, statistics",
		notModule: []string{"schedule", "engine", "analyze", "report", "live", "experiment", "plan"}},
	// engine runs a stage and emits Results; it knows no renderer, no live
	// sink and no verdict.
	{subject: "engine", design: "engine | … | reports",
		notModule: []string{"report", "live", "analyze", "experiment", "plan"}},
	// record is the bottom of the data flow: nothing that produces results
	// (engine, protocol, observe) and nothing that judges or shows them
	// (analyze, report, live, experiment).
	{subject: "record", design: "record | … | how results are shown",
		notModule: []string{"engine", "protocol", "observe", "analyze", "report", "live", "experiment", "plan"},
		notStd:    []string{"net", "net/http"}},
	// observe samples the target, the GPUs and the load generator on the
	// engine's clock, without reaching into the engine.
	{subject: "observe", design: "observe | … | the engine's internals",
		notModule: []string{"engine", "experiment", "report", "live"}},
	// analyze gives verdicts from records, summaries and telemetry samples
	// (observe's data, upstream of it): it neither talks HTTP nor knows who
	// ran the requests or how the verdicts are shown. It reads no files:
	// summary loads a run directory and hands it the records.
	{subject: "analyze", design: "analyze | … | I/O formats",
		notModule: []string{"engine", "protocol", "report", "live", "experiment", "plan", "rundir"},
		notStd:    []string{"net", "net/http"}},
	// rundir owns the run directory's files: names, formats, readers and
	// writers. What the figures mean, who runs requests and who shows
	// them are not its concern: telemetry samples are read into the
	// caller's type, so it does not know observe either.
	{subject: "rundir", design: "rundir | the run directory's files … | what the figures mean",
		notModule: []string{"engine", "protocol", "analyze", "report", "live", "experiment", "plan", "observe"},
		notStd:    []string{"net", "net/http"}},
	// report renders; network sinks and the live /metrics server are live's.
	{subject: "report", design: "report | renderers … | how numbers were produced, network sinks",
		notModule: []string{"live", "engine", "protocol", "experiment", "plan"},
		notStd:    []string{"net", "net/http"}},
	// live serves and pushes what a run produces; it computes no figure and
	// drives no run.
	{subject: "live", design: "live | … | how figures are computed",
		notModule: []string{"experiment", "engine", "analyze", "report"}},
	// sim is the test double and the embedded target: it must stay
	// independent of the load generator it stands in front of.
	{subject: "sim", design: "sim | … | the load generator",
		notModule: []string{"plan", "workload", "schedule", "protocol", "engine", "record", "observe", "analyze", "report", "live", "experiment", "capacity"}},
	// experiment orchestrates runs against real targets: the simulator,
	// and capacity planning on its model, are not its concern (its tests
	// start the simulator as a target, which a test may).
	{subject: "experiment", design: "experiment | … | the simulator",
		notModule: []string{"sim", "capacity"}},
	// capacity plans in virtual time on the simulator's batching model:
	// it neither sends requests nor runs stages (and sim, the model it
	// drives, knows nothing of it: sim's rule).
	{subject: "capacity", design: "capacity planning (one package) | … | HTTP, the engine",
		notModule: []string{"engine", "protocol", "experiment", "live", "report", "cmd/inferload/cli"},
		notStd:    []string{"net/http"}},
	// summary turns a run directory (records, events, telemetry, the
	// resolved plan, the experiment's design) into summary.json and the
	// report, one ordered assembly: it runs nothing, so what rebuilds a
	// run (report, distributed's merge) needs no orchestrator.
	{subject: "summary", design: "summary | … | running requests, the network",
		notModule: []string{"experiment", "live", "distributed", "sim", "capacity", "cmd/inferload/cli"},
		notStd:    []string{"net", "net/http"}},
	// httpguard is the one guard of every HTTP surface inferload serves
	// (live UI, launcher, collector): a leaf they all import, knowing
	// none of them, nor what a run is.
	{subject: "internal/httpguard", design: "live | … | distributed runs | … (one guard for the surfaces both serve)",
		notModule: []string{"live", "distributed", "experiment", "engine", "plan", "record", "rundir", "report"}},
	// inputfile reads the files a user names, bounded: a leaf any package
	// that reads one imports, knowing none of them.
	{subject: "internal/inputfile", design: "Every file read is bounded and interruptible (issue 33)",
		notModule: []string{"plan", "workload", "schedule", "protocol", "engine", "record", "experiment", "rundir", "live", "report"}},
	// The CLI is wiring only and sits on top: no library package imports it.
	{subject: everyLibraryPackage, design: "cmd/inferload + cmd/inferload/cli | flag parsing and wiring only",
		notModule: []string{"cmd/inferload/cli"}},
	// Signals are the CLI's: "the one place that touches os, the clock and
	// signals". (os and time are imported widely for files and durations,
	// so only signals can be checked by import.)
	{subject: everyLibraryPackage, design: "cmd/inferload + cmd/inferload/cli | the one place that touches … signals",
		notStd: []string{"os/signal"}},
}

// TestImportRules checks every rule against the module's import graph.
func TestImportRules(t *testing.T) {
	graph := loadGraph(t)
	for _, r := range rules {
		t.Run(strings.NewReplacer(" ", "_", "(", "", ")", "").Replace(r.subject), func(t *testing.T) {
			for _, v := range graph.violations(r) {
				t.Errorf("%s (DESIGN.md: %q)", v, r.design)
			}
		})
	}
}

// TestInternalHoldsLeaves keeps internal/ for leaf helpers (issue 28
// item 7): a package there depends on no module package outside
// internal/, so a drawing of the house by directory does not put the
// library above them. The developer tools, this test and the engine
// starter for tests are not helpers of the library and are exempt.
func TestInternalHoldsLeaves(t *testing.T) {
	graph := loadGraph(t)
	var leaves int
	for path, p := range graph {
		rel, ok := strings.CutPrefix(path, module+"/internal/")
		if !ok || strings.HasPrefix(rel, "tools/") || rel == "archtest" || rel == "enginetest" {
			continue
		}
		leaves++
		for _, dep := range p.Deps {
			if d, ok := strings.CutPrefix(dep, module+"/"); ok && !strings.HasPrefix(d, "internal/") {
				t.Errorf("internal/%s depends on %s: internal/ holds leaf helpers only", rel, d)
			}
		}
	}
	if leaves == 0 {
		t.Fatal("no package under internal/ was listed: is the test running inside the module?")
	}
}

// TestViolationsFound proves the checker sees what it must on a small
// graph, so a rule cannot pass by looking at nothing.
func TestViolationsFound(t *testing.T) {
	t.Parallel()
	g := graph{
		module + "/report": {ImportPath: module + "/report", Imports: []string{"fmt", "net/http", module + "/analyze"},
			Deps: []string{"fmt", "net/http", module + "/analyze", module + "/live"}},
		module + "/analyze": {ImportPath: module + "/analyze", Imports: []string{module + "/live"}, Deps: []string{module + "/live"}},
		module + "/live":    {ImportPath: module + "/live"},
		module + "/cmd/x":   {ImportPath: module + "/cmd/x", Imports: []string{"os/signal"}, Deps: []string{"os/signal"}},
	}
	cases := []struct {
		r    rule
		want []string
	}{
		// A direct standard import and a module package reached through
		// another one are both reported, the latter with its path.
		{rule{subject: "report", notModule: []string{"live"}, notStd: []string{"net/http"}},
			[]string{"report imports net/http", "report depends on live (through analyze)"}},
		// The command is not a library package, so its os/signal is fine.
		{rule{subject: everyLibraryPackage, notStd: []string{"os/signal"}}, nil},
		// A subject that does not exist is an error, not a vacuous pass.
		{rule{subject: "rundir"}, []string{"rundir is not a package of the module"}},
		// So is a forbidden package that does not exist (a rename would
		// otherwise retire the rule silently).
		{rule{subject: "live", notModule: []string{"web"}}, []string{"rule names web, which is not a package of the module"}},
	}
	for _, tc := range cases {
		if got := g.violations(tc.r); !slices.Equal(got, tc.want) {
			t.Errorf("rule %+v: got %q, want %q", tc.r, got, tc.want)
		}
	}
}

// pkg is the part of `go list -json` output the rules read.
type pkg struct {
	ImportPath string
	Imports    []string // direct, non-test
	Deps       []string // transitive, non-test
}

// graph holds every package the module's packages build from, by import
// path.
type graph map[string]*pkg

// loadGraph runs `go list -deps -json` on every package of the module.
// The go binary is the one on PATH: `go test` puts its own GOROOT/bin
// first there, so it is the toolchain that runs this test.
func loadGraph(t *testing.T) graph {
	t.Helper()
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command is needed to list the module's imports: %v", err)
	}
	cmd := exec.Command(gobin, "list", "-deps", "-json=ImportPath,Imports,Deps", module+"/...")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.Bytes())
	}
	g := graph{}
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		p := new(pkg)
		if err := dec.Decode(p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("reading go list output: %v", err)
		}
		g[p.ImportPath] = p
	}
	for _, want := range []string{"record", "report", "live", "cmd/inferload/cli"} {
		if g[module+"/"+want] == nil {
			t.Fatalf("go list did not list %s/%s: is the test running inside the module?", module, want)
		}
	}
	return g
}

// violations lists how the graph breaks r, in a stable order.
func (g graph) violations(r rule) []string {
	var out []string
	for _, name := range r.notModule {
		if g[module+"/"+name] == nil {
			out = append(out, "rule names "+name+", which is not a package of the module")
		}
	}
	subjects := g.subjects(r.subject)
	if len(subjects) == 0 {
		return append(out, r.subject+" is not a package of the module")
	}
	for _, p := range subjects {
		rel := strings.TrimPrefix(p.ImportPath, module+"/")
		for _, std := range r.notStd {
			if slices.Contains(p.Imports, std) {
				out = append(out, rel+" imports "+std)
			}
		}
		for _, name := range r.notModule {
			path := module + "/" + name
			if !slices.Contains(p.Deps, path) {
				continue
			}
			if slices.Contains(p.Imports, path) {
				out = append(out, rel+" imports "+name)
			} else {
				out = append(out, rel+" depends on "+name+" (through "+g.through(p, path)+")")
			}
		}
	}
	return out
}

// subjects are the packages a rule's subject names.
func (g graph) subjects(subject string) []*pkg {
	if subject != everyLibraryPackage {
		if p := g[module+"/"+subject]; p != nil {
			return []*pkg{p}
		}
		return nil
	}
	var out []*pkg
	for path, p := range g {
		if !isLibrary(path) {
			continue
		}
		out = append(out, p)
	}
	slices.SortFunc(out, func(a, b *pkg) int { return strings.Compare(a.ImportPath, b.ImportPath) })
	return out
}

// through names the module packages p imports directly that bring in
// target, so a message says which edge to cut.
func (g graph) through(p *pkg, target string) string {
	var via []string
	for _, imp := range p.Imports {
		if d := g[imp]; d != nil && (imp == target || slices.Contains(d.Deps, target)) {
			via = append(via, strings.TrimPrefix(imp, module+"/"))
		}
	}
	return strings.Join(via, ", ")
}

// isLibrary reports whether path is a library package of the module: not
// the command (cmd/...), the CLI (cmd/inferload/cli) among them, a developer tool
// (internal/tools/...), the tests' engine starter (internal/enginetest) or
// their browser (internal/browsertest, which reads $TEST_ARTIFACTS as CI
// sets it).
func isLibrary(path string) bool {
	rel, ok := strings.CutPrefix(path, module+"/")
	return ok && !strings.HasPrefix(rel, "cmd/") && !strings.HasPrefix(rel, "internal/tools/") &&
		rel != "internal/enginetest" && rel != "internal/browsertest"
}
