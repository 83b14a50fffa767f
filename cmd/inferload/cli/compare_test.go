package cli

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/inferload/inferload/record"
	"github.com/inferload/inferload/rundir"
)

// plantRun writes a closed-loop run directory whose latencies are all
// stretched by slowdown: 16 users, 30 measured seconds after a 2 s warm-up,
// lognormal TTFT and token gaps. Generated, so the truth is known.
func plantRun(t *testing.T, name string, seed uint64, slowdown float64, model string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), name)
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(seed, 1))
	lognormal := func(medianUS, sigma float64) int64 {
		return int64(medianUS * slowdown * math.Exp(sigma*rng.NormFloat64()))
	}
	var lines []any
	id := uint64(0)
	for range 16 {
		for at := int64(0); at < 32_000_000; {
			id++
			r := &record.Result{ID: id, SendUS: at, Stream: true, Warmup: at < 2_000_000, OutputTokens: 20 + rng.IntN(21)}
			r.TTFTUS = lognormal(50_000, 0.3)
			r.EventsUS = []int64{r.TTFTUS}
			for i := 1; i < r.OutputTokens; i++ {
				r.EventsUS = append(r.EventsUS, r.EventsUS[i-1]+lognormal(10_000, 0.2))
			}
			r.E2EUS = r.EventsUS[len(r.EventsUS)-1]
			lines = append(lines, r)
			at = r.DoneUS()
		}
	}
	writeLines(t, filepath.Join(dir, "records.jsonl"), lines)
	writeLines(t, filepath.Join(dir, "events.jsonl"), []any{
		record.Event{TimeUS: 2_000_000, Kind: record.EventWarmupEnd},
		record.Event{TimeUS: 32_000_000, Kind: record.EventMeasureEnd},
	})
	env, _ := json.Marshal(map[string]any{"target": map[string]any{"model": model}})
	if err := os.WriteFile(filepath.Join(dir, "env.json"), env, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func writeLines(t *testing.T, path string, lines []any) {
	t.Helper()
	w, err := rundir.NewJSONLWriter(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range lines {
		if err := w.Write(l); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestCompareCommand(t *testing.T) {
	t.Parallel()
	base := plantRun(t, "base", 1, 1, "m-7b")
	same := plantRun(t, "same", 2, 1, "m-7b")
	slow := plantRun(t, "slow", 3, 1.15, "m-7b-<b>q4</b>")
	invalid := plantRun(t, "invalid", 4, 1, "m-7b")
	if err := rundir.WriteJSON(filepath.Join(invalid, rundir.Summary), &record.Summary{SchemaVersion: 1,
		Validity: &record.Validity{Reasons: []string{"achieved load 1.01 users is 49% below the intended 2"}}}); err != nil {
		t.Fatal(err)
	}
	html := filepath.Join(t.TempDir(), "compare.html")
	tests := []struct {
		name     string
		args     []string
		code     int
		stdout   []string // substrings of stdout
		stderr   string   // substring of stderr
		wantHTML bool
	}{
		// Noise between two samples of one distribution passes.
		{name: "noise", args: []string{base, same}, code: ExitOK, stdout: []string{"PASS", "no env.json field differs"}},
		// A real 15% slowdown fails CI with 98, and the env diff shows why.
		{name: "slowdown", args: []string{base, slow}, code: ExitRegression,
			stdout: []string{"REGRESSION", "e2e_ms.p99", "m-7b-<b>q4</b>"}, stderr: "regression: "},
		// Markdown for a PR comment, escaped; the HTML page is written too.
		{name: "markdown", args: []string{"--format", "markdown", "--html", html, base, slow}, code: ExitRegression,
			stdout: []string{"### ❌ inferload compare", "| e2e\\_ms.p99 |", "m-7b-&lt;b&gt;q4&lt;/b&gt;"}, wantHTML: true},
		// JSON carries the verdict for scripts.
		{name: "json", args: []string{"--format", "json", base, slow}, code: ExitRegression, stdout: []string{`"regressions": `, `"metric": "itl_ms.p99"`}},
		// Turning every limit off turns the verdict into a report only.
		{name: "no limits", args: []string{"--no-default-limits", base, slow}, code: ExitOK, stdout: []string{"PASS: no regression limits were set"}},
		// A generous override lets the slowdown through on that figure.
		{name: "override", args: []string{"--no-default-limits", "--limit", "e2e_ms.p99=50%", base, slow}, code: ExitOK, stdout: []string{"(limit 50%)"}},
		// Bad flags and arguments are usage errors, naming the problem.
		{name: "bad limit", args: []string{"--limit", "ttft=5%", base, slow}, code: ExitUsage, stderr: "unknown figure"},
		{name: "bad format", args: []string{"--format", "yaml", base, slow}, code: ExitUsage, stderr: "--format"},
		{name: "bad confidence", args: []string{"--confidence", "95", base, slow}, code: ExitUsage, stderr: "--confidence"},
		{name: "one arg", args: []string{base}, code: ExitUsage, stderr: "accepts 2 arg(s)"},
		// Repeats: comma-separated runs a side are judged on the spread
		// between them, and say so; an empty entry is a usage error.
		{name: "repeats", args: []string{"--format", "json", base + "," + same, slow + "," + slow}, code: ExitRegression,
			stdout: []string{`"baseline_runs": 2`, `"current_runs": 2`, `"test": "between-runs-t"`}},
		{name: "repeats text", args: []string{base + "," + same, same + "," + base}, code: ExitOK, stdout: []string{"stand between the runs (2 baseline, 2 current"}},
		{name: "empty repeat", args: []string{base + ",", slow}, code: ExitUsage, stderr: "an empty run directory"},
		{name: "embed repeats", args: []string{"--embed", base, slow + "," + same}, code: ExitUsage, stderr: "--embed: the current side has 2 runs"},
		{name: "bad batches", args: []string{"--batches", "1", base, slow}, code: ExitUsage, stderr: "--batches 1"},
		// --batches 0 takes values as independent, and says so.
		{name: "no runs check", args: []string{"--batches", "0", base, slow}, code: ExitRegression, stdout: []string{"Values are taken as independent"}},
		// A run its own summary.json judged NOT VALID is no verdict: 97,
		// named on stderr and in the headline, unless the figures may decide.
		{name: "not valid", args: []string{base, invalid}, code: ExitNotValid,
			stdout: []string{"NOT VALID: no figure is significantly worse", "current invalid is NOT VALID: achieved load 1.01 users"}, stderr: "current invalid is NOT VALID"},
		{name: "allow invalid", args: []string{"--allow-invalid", base, invalid}, code: ExitOK, stdout: []string{"NOT VALID"}},
		// A regression still exits 98 when a run is also NOT VALID.
		{name: "regression and not valid", args: []string{invalid, slow}, code: ExitRegression, stdout: []string{"REGRESSION", "but baseline invalid is NOT VALID"}},
		// A directory that is not a run is an error that names which side.
		{name: "not a run", args: []string{t.TempDir(), slow}, code: ExitError, stderr: "baseline: "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := runCLI(t, append([]string{"compare"}, tt.args...)...)
			if code != tt.code {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tt.code, stdout, stderr)
			}
			for _, want := range tt.stdout {
				if !strings.Contains(stdout, want) {
					t.Errorf("stdout lacks %q:\n%s", want, stdout)
				}
			}
			if !strings.Contains(stderr, tt.stderr) {
				t.Errorf("stderr lacks %q: %s", tt.stderr, stderr)
			}
			if tt.wantHTML {
				page, err := os.ReadFile(html)
				if err != nil || !strings.Contains(string(page), `id="compare-figures"`) {
					t.Errorf("compare.html not written: %v", err)
				}
			}
		})
	}
}
