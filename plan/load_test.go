package plan

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func ptr[T any](v T) *T { return &v }

// ignoreOrigin compares plans by their fields, not by where values came from.
var ignoreOrigin = cmpopts.IgnoreUnexported(Plan{})

func TestLoadExamples(t *testing.T) {
	t.Parallel()
	tests := []struct {
		file string
		want *Plan
	}{
		// Closed loop: unset options take their defaults; open-loop-only
		// options (arrival, late_after) stay unset.
		{"closed.yaml", &Plan{
			Name: "qwen-c32",
			Target: Target{
				URL: "http://127.0.0.1:8000/v1", Model: "qwen2.5-7b", API: "chat",
				Stream: ptr(true), IncludeUsage: ptr(true),
				Body:     map[string]any{"temperature": 0},
				Timeouts: Timeouts{Connect: 10 * time.Second, TTFT: time.Minute, Total: 10 * time.Minute},
			},
			Load: LoadOptions{Concurrency: 32, ThinkTime: "uniform(100ms,500ms)", Duration: 2 * time.Minute,
				Warmup: 20 * time.Second, Grace: 30 * time.Second},
			Workload: Workload{Seed: 1, Salt: "run", InputTokens: "512", OutputTokens: "128", IgnoreEOS: ptr(true), LengthBuckets: []int{256, 1024, 4096}},
			Output:   Output{Dir: "runs"},
		}},
		// Open loop with gamma arrivals: late_after gets its default, the
		// run stops on a request count so no default duration is added.
		{"open.yaml", &Plan{
			Name: "bursty-8rps",
			Target: Target{
				URL: "https://llm.internal.example:8443/v1", Model: "llama-3.1-8b-instruct", API: "chat",
				Stream: ptr(true), IncludeUsage: ptr(true), APIKeyEnv: "LLM_API_KEY", CAFile: "/etc/ssl/private-ca.pem",
				Headers:  map[string]string{"X-Tenant": "perf-team"},
				Timeouts: Timeouts{Connect: 10 * time.Second, TTFT: 30 * time.Second, Total: 5 * time.Minute},
			},
			Load: LoadOptions{Rate: 8, Arrival: "gamma", Burstiness: 0.5, MaxInFlight: 256, Requests: 2000,
				LateAfter: 10 * time.Millisecond, Grace: 30 * time.Second},
			Workload: Workload{Seed: 42, Salt: "run", InputTokens: "uniform(256,2048)", OutputTokens: "uniform(64,512)", IgnoreEOS: ptr(true), LengthBuckets: []int{256, 1024, 4096}},
			Output:   Output{Dir: "runs/bursty"},
		}},
		// Request classes: the documented 7:2:1 mix plus a rare long
		// document, a shared system prompt on chats, and bad input.
		{"classes.yaml", &Plan{
			Name: "mixed",
			Target: Target{
				URL: "http://127.0.0.1:8000/v1", Model: "qwen2.5-7b", API: "chat",
				Stream: ptr(true), IncludeUsage: ptr(true),
				Timeouts: Timeouts{Connect: 10 * time.Second, TTFT: time.Minute, Total: 10 * time.Minute},
			},
			Load: LoadOptions{Rate: 4, Arrival: "poisson", Duration: 5 * time.Minute, Warmup: 30 * time.Second,
				LateAfter: 10 * time.Millisecond, Grace: 30 * time.Second},
			Workload: Workload{Seed: 1, Salt: "run", IgnoreEOS: ptr(true), LengthBuckets: []int{256, 1024, 4096},
				Classes: []Class{
					{Name: "chat", Weight: 7, InputTokens: "128", OutputTokens: "buckets(128:1,512:1)",
						SharedPrefix: SharedPrefix{Tokens: 1000, Fraction: 0.8, Groups: 4}},
					{Name: "rag", Weight: 2, InputTokens: "512", OutputTokens: "buckets(128:1,512:1)"},
					{Name: "doc", Weight: 1, InputTokens: "2048", OutputTokens: "buckets(128:1,512:1)",
						Body: map[string]any{"temperature": 0}},
					{Name: "huge", Weight: 0.1, InputTokens: "4096", OutputTokens: "128", API: "completions"},
				},
				BadInput: BadInput{Fraction: 0.02, MaxContext: 8192}},
			Output: Output{Dir: "runs"},
		}},
	}
	env := func(string) string { return "sk-test" }
	for _, tt := range tests {
		got, err := Load(filepath.Join("testdata", tt.file), nil, env)
		if err != nil {
			t.Errorf("%s: %v", tt.file, err)
			continue
		}
		if diff := cmp.Diff(tt.want, got, ignoreOrigin); diff != "" {
			t.Errorf("%s: plan mismatch (-want +got):\n%s", tt.file, diff)
		}
	}
}

func TestEveryFieldDecodes(t *testing.T) {
	t.Parallel()
	// Every field's type must be one the decoder reads; this file sets
	// each field once, so a field of a new type fails here.
	data, err := os.ReadFile(filepath.Join("testdata", "every-field.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var p Plan
	if errs := decodeYAML("every-field.yaml", data, &p); len(errs) > 0 {
		t.Fatal(errs)
	}
	for _, path := range FieldPaths() {
		if _, ok := p.origin[path]; !ok {
			t.Errorf("testdata/every-field.yaml does not set %s", path)
		}
	}
}

// parseErrors parses a plan held in a string and returns its error text.
func parseErrors(t *testing.T, yaml string) string {
	t.Helper()
	_, err := Parse("plan.yaml", []byte(yaml))
	if err == nil {
		return ""
	}
	var fe *FieldError
	if !errors.As(err, &fe) {
		t.Errorf("error %q is not a *FieldError", err)
	}
	return err.Error()
}

const validHead = "target: {url: http://127.0.0.1:1/v1}\n"

func TestDecodeErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		yaml string
		want string
	}{
		// A misspelt field names its path and line and suggests the fix.
		{validHead + "load:\n  concurency: 32\n", `plan.yaml:3: load.concurency: unknown field (did you mean "concurrency"?)`},
		// Flag-style spelling is recognised.
		{validHead + "load:\n  max-in-flight: 3\n", `plan.yaml:3: load.max-in-flight: unknown field (did you mean "max_in_flight"?)`},
		// A field in the wrong section says where it belongs.
		{validHead + "load:\n  url: x\n", `plan.yaml:3: load.url: unknown field (did you mean "target.url"? it belongs under target)`},
		// A name far from any field lists what the section has.
		{"zzz: 1\n", `plan.yaml:1: zzz: unknown field ((top level) has: allow_invalid, compute, env, load, name, observe, output, target, thresholds, workload)`},
		// A bad duration names field, line and the expected form.
		{validHead + "load:\n  concurrency: 1\n  duration: 2 min\n", `plan.yaml:4: load.duration: "2 min" is not a duration (e.g. 90s, 2m)`},
		// A duration without a unit is rejected, not read as nanoseconds.
		{validHead + "load:\n  duration: 90\n", `plan.yaml:3: load.duration: "90" is not a duration (e.g. 90s, 2m)`},
		// A bad number says what was expected.
		{validHead + "load:\n  rate: fast\n", `plan.yaml:3: load.rate: "fast" is not a number`},
		// A fraction is not a user count.
		{validHead + "load:\n  concurrency: 1.5\n", `plan.yaml:3: load.concurrency: "1.5" is not an integer`},
		// A negative seed is not a uint64.
		{"workload:\n  seed: -1\n", `plan.yaml:2: workload.seed: "-1" is not a non-negative integer`},
		// A bool that is not one.
		{"target:\n  stream: sometimes\n", `plan.yaml:2: target.stream: "sometimes" is not true or false`},
		// A list where a string belongs.
		{"target:\n  url: [a, b]\n", `plan.yaml:2: target.url: want a string, got a list`},
		// A scalar where a section belongs.
		{"load: 5\n", `plan.yaml:1: load: want a mapping of fields, got "5"`},
		// A document that is not a mapping at all.
		{"- a\n- b\n", `plan.yaml:1: (top level): want a mapping of fields, got a list`},
		// Duplicate keys are an error, not last-one-wins.
		{validHead + "load:\n  rate: 1\n  rate: 2\n", `plan.yaml:4: load.rate: duplicate key (first at line 3)`},
		// Header names differing only in case are duplicates.
		{"target:\n  headers:\n    X-A: 1\n    x-a: 2\n", `plan.yaml:4: target.headers.x-a: duplicate key (first at line 3)`},
		// A header needs a value.
		{"target:\n  headers:\n    X-A:\n", `plan.yaml:3: target.headers.X-A: want a string value, got nothing (null)`},
		// Body values must be representable in JSON.
		{"target:\n  body:\n    x: .inf\n", `plan.yaml:3: target.body.x: .inf cannot be sent as JSON`},
		// Merge keys are refused rather than half-supported.
		{"base: &b {rate: 1}\nload:\n  <<: *b\n", `keys must be plain names`},
		// Syntax errors carry their line.
		{"load:\n  rate: 1\n bad\n", `plan.yaml:2: YAML syntax: did not find expected key`},
		// A malformed stage names its item and line before anything runs.
		{validHead + "load:\n  concurrency: 1\n  stages:\n    - 30s@8\n    - 30s 8\n", `plan.yaml:6: load.stages[1]: "30s 8": want DURATION@LOAD`},
		// Half a user in a closed-loop stage.
		{validHead + "load:\n  concurrency: 1\n  stages: [30s@2.5]\n", `load.stages[0]: "30s@2.5": load "2.5": want a whole number of users`},
		// Each stage discards its own warm-up, so it must be shorter than every stage.
		{validHead + "load:\n  concurrency: 1\n  warmup: 10s\n  stages: [30s@1, 5s@2]\n", `plan.yaml:4: load.warmup: 10s: each stage discards its own warm-up`},
		// A duration written as 0 is no duration, not the 1m default.
		{validHead + "load:\n  concurrency: 1\n  duration: 0s\n", `plan.yaml:4: load.duration: 0s: want a positive duration`},
		// Zero users is named as the problem it is.
		{validHead + "load:\n  concurrency: 0\n  requests: 3\n", `plan.yaml:3: load.concurrency: 0: want a positive number of users`},
		// Two documents in one file are refused.
		{"name: a\n---\nname: b\n", `plan.yaml:2: a second YAML document starts here; a plan file holds one`},
	}
	for _, tt := range tests {
		got := parseErrors(t, tt.yaml)
		if !strings.Contains(got, tt.want) {
			t.Errorf("plan:\n%s\nerror:\n%s\nwant it to contain:\n%s", tt.yaml, got, tt.want)
		}
	}
}

func TestDecodeReportsEveryProblem(t *testing.T) {
	t.Parallel()
	got := parseErrors(t, "load:\n  concurency: 1\n  duration: soon\nworkload:\n  sed: 3\n")
	// All three problems come back together, in file order.
	want := []string{"plan.yaml:2: load.concurency", "plan.yaml:3: load.duration", "plan.yaml:5: workload.sed"}
	lines := strings.Split(got, "\n")
	if len(lines) != len(want) {
		t.Fatalf("got %d problems:\n%s", len(lines), got)
	}
	for i, w := range want {
		if !strings.HasPrefix(lines[i], w) {
			t.Errorf("problem %d = %q, want prefix %q", i, lines[i], w)
		}
	}
}

func TestDecodeValues(t *testing.T) {
	t.Parallel()
	p, err := Parse("plan.yaml", []byte(`target:
  url: http://127.0.0.1:9/v1
  stream: false
  body:
    stop: ["\n", "END"]
    n: 2
    logit_bias: {"50256": -100}
    version: "1.0"
    user: null
load:
  rate: 2.5
  duration: 1h30m
workload:
  seed: 18446744073709551615
  input_tokens: uniform(1,2)
`))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		// Lists and nested maps become JSON arrays and objects.
		"stop":       []any{"\n", "END"},
		"logit_bias": map[string]any{"50256": -100},
		// Integers stay integers.
		"n": 2,
		// A quoted number stays a string.
		"version": "1.0",
		// An explicit null is sent as JSON null.
		"user": nil,
	}
	if diff := cmp.Diff(want, p.Target.Body); diff != "" {
		t.Errorf("body (-want +got):\n%s", diff)
	}
	if *p.Target.Stream || p.Load.Rate != 2.5 || p.Load.Duration != 90*time.Minute || p.Workload.Seed != 1<<64-1 {
		t.Errorf("decoded %+v %+v", p.Target, p.Load)
	}
}

func TestDecodeAliasBomb(t *testing.T) {
	t.Parallel()
	// A billion-laughs document must fail quickly, not expand.
	var b strings.Builder
	b.WriteString("a0: &a0 [x, x, x, x, x, x, x, x, x]\n")
	for i := 1; i < 9; i++ {
		b.WriteString("a" + string(rune('0'+i)) + ": &a" + string(rune('0'+i)) + " [")
		for j := range 9 {
			if j > 0 {
				b.WriteString(", ")
			}
			b.WriteString("*a" + string(rune('0'+i-1)))
		}
		b.WriteString("]\n")
	}
	got := parseErrors(t, "target:\n  url: http://127.0.0.1:1/v1\n  body:\n"+indent(b.String())+"    bomb: *a8\n")
	if !strings.Contains(got, "more than 100000 YAML nodes") {
		t.Errorf("alias bomb error = %q", got)
	}
}

// indent puts lines under target.body, where any key is allowed.
func indent(s string) string {
	return "    " + strings.ReplaceAll(strings.TrimSuffix(s, "\n"), "\n", "\n    ") + "\n"
}

func TestLoadFileErrors(t *testing.T) {
	t.Parallel()
	// A missing file is reported with its path.
	_, err := Load(filepath.Join(t.TempDir(), "nope.yaml"), nil, nil)
	if err == nil || !strings.Contains(err.Error(), "nope.yaml") {
		t.Errorf("missing file: %v", err)
	}
	// Errors in a real file carry the path given.
	path := filepath.Join(t.TempDir(), "p.yaml")
	if err := os.WriteFile(path, []byte("load:\n  concurency: 3\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = Load(path, nil, nil)
	if err == nil || !strings.HasPrefix(err.Error(), path+":2: load.concurency: unknown field") {
		t.Errorf("bad file: %v", err)
	}
	// An empty file with flags is a fine plan.
	empty := filepath.Join(t.TempDir(), "empty.yaml")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = Load(empty, nil, nil)
	if err == nil || !strings.Contains(err.Error(), "target.url: required") {
		t.Errorf("empty file: %v", err)
	}
}
