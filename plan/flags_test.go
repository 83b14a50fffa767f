package plan

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/pflag"
)

// newFlags parses args into a fresh flag set.
func newFlags(t *testing.T, args ...string) *Flags {
	t.Helper()
	fs := pflag.NewFlagSet("run", pflag.ContinueOnError)
	fl := BindFlags(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatalf("parse %q: %v", args, err)
	}
	return fl
}

// writePlan writes a plan file in a temporary directory.
func writePlan(t *testing.T, yaml string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "plan.yaml")
	if err := os.WriteFile(path, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestFlagsOverrideFile(t *testing.T) {
	t.Parallel()
	path := writePlan(t, `
target:
  url: http://127.0.0.1:1/v1
  headers: {Authorization: Bearer x, X-Keep: file}
  body: {temperature: 0.2, top_p: 0.9}
load:
  concurrency: 4
  duration: 30s
workload:
  input_tokens: 100
`)
	fl := newFlags(t, "--duration", "45s", "--stream=false", "--header", "authorization=Bearer y",
		"--body", "temperature=0.7", "--body", `stop=["\n"]`, "--body", "user=alice", "--seed", "7")
	p, err := Load(path, fl, nil)
	if err != nil {
		t.Fatal(err)
	}
	// Given flags win over the file.
	if p.Load.Duration != 45*time.Second || *p.Target.Stream || p.Workload.Seed != 7 {
		t.Errorf("flags not applied: duration %v stream %v seed %d", p.Load.Duration, *p.Target.Stream, p.Workload.Seed)
	}
	// Flags not given leave the file's values, even where the flag's
	// help shows a different default.
	if p.Load.Concurrency != 4 || p.Workload.InputTokens != "100" {
		t.Errorf("file values lost: concurrency %d input %q", p.Load.Concurrency, p.Workload.InputTokens)
	}
	// --header replaces the same header whatever its case and keeps others.
	wantHeaders := map[string]string{"authorization": "Bearer y", "X-Keep": "file"}
	if diff := cmp.Diff(wantHeaders, p.Target.Headers); diff != "" {
		t.Errorf("headers (-want +got):\n%s", diff)
	}
	// --body values are JSON when valid JSON, strings otherwise.
	wantBody := map[string]any{"temperature": json.Number("0.7"), "top_p": 0.9, "stop": []any{"\n"}, "user": "alice"}
	if diff := cmp.Diff(wantBody, p.Target.Body); diff != "" {
		t.Errorf("body (-want +got):\n%s", diff)
	}
}

func TestFlagsOnly(t *testing.T) {
	t.Parallel()
	// The open-loop command line, without a file.
	fl := newFlags(t, "--url", "http://127.0.0.1:8000/v1", "--rate", "8", "--arrival", "poisson",
		"--requests", "2000", "--max-in-flight", "256")
	p, err := Load("", fl, nil)
	if err != nil {
		t.Fatal(err)
	}
	if p.Load.Rate != 8 || p.Load.Arrival != "poisson" || p.Load.Requests != 2000 || p.Load.MaxInFlight != 256 || p.Load.Duration != 0 {
		t.Errorf("load = %+v", p.Load)
	}
}

func TestFlagErrorsNameTheFlag(t *testing.T) {
	t.Parallel()
	tests := []struct {
		args []string
		want string
	}{
		// Both load models at once: the error points at the flag.
		{[]string{"--url", "http://127.0.0.1:1", "--concurrency", "2", "--rate", "3"}, "--rate: set load.concurrency"},
		// A bad think time given as a flag names the flag.
		{[]string{"--url", "http://127.0.0.1:1", "--concurrency", "2", "--think-time", "soon"}, `--think-time: think time "soon"`},
		// A bad URL given as a flag names the flag.
		{[]string{"--url", "ftp://x", "--concurrency", "2"}, `--url: "ftp://x" is not an http://`},
	}
	for _, tt := range tests {
		_, err := Load("", newFlags(t, tt.args...), nil)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%q: error %v, want %q", tt.args, err, tt.want)
		}
	}
}

func TestPairFlagParseErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		args []string
		want string
	}{
		// A header without '=' is rejected by flag parsing, naming the flag.
		{[]string{"--header", "X-A"}, `"--header" flag: want header name=value`},
		// A body field needs a name.
		{[]string{"--body", "=3"}, `"--body" flag: want body field name=value`},
	}
	for _, tt := range tests {
		fs := pflag.NewFlagSet("run", pflag.ContinueOnError)
		fs.SetOutput(new(strings.Builder))
		BindFlags(fs)
		err := fs.Parse(tt.args)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%q: error %v, want %q", tt.args, err, tt.want)
		}
	}
}

func TestJSONOrString(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want any
	}{
		// Numbers stay exact.
		{"0.7", json.Number("0.7")},
		// Booleans are JSON.
		{"true", true},
		// Objects are JSON.
		{`{"a":1}`, map[string]any{"a": json.Number("1")}},
		// A bare word is a string.
		{"alice", "alice"},
		// An empty value is the empty string.
		{"", ""},
		// A valid value followed by more text is a string.
		{"1 2", "1 2"},
		// A quoted JSON string loses its quotes.
		{`"42"`, "42"},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, jsonOrString(tt.in)); diff != "" {
			t.Errorf("jsonOrString(%q) (-want +got):\n%s", tt.in, diff)
		}
	}
}

func TestEveryFlagHasHelp(t *testing.T) {
	t.Parallel()
	fs := pflag.NewFlagSet("run", pflag.ContinueOnError)
	BindFlags(fs)
	fs.VisitAll(func(f *pflag.Flag) {
		if len(f.Usage) < 15 {
			t.Errorf("--%s has no real help text: %q", f.Name, f.Usage)
		}
	})
}

func TestClassFlag(t *testing.T) {
	t.Parallel()
	fl := newFlags(t, "--url", "http://127.0.0.1:1/v1", "--concurrency", "2",
		"--class", "name=chat,weight=7,input_tokens=uniform(64,256),output=128,prefix_tokens=50,prefix_groups=2",
		"--class", "name=doc, weight=1, input=2048, api=completions, ignore_eos=false, ttft_timeout=2s, timeout=1m, connect_timeout=3s",
		"--class", "name=photo,weight=1,images=2,image_size=1920x1080,image_format=png",
		"--length-buckets", "100,1000", "--bad-input-fraction", "0.1", "--max-context", "4096")
	p, err := Load("", fl, nil)
	if err != nil {
		t.Fatal(err)
	}
	// Commas inside a distribution stay with it; short keys are accepted;
	// unset class fields take the defaults.
	want := []Class{
		{Name: "chat", Weight: 7, InputTokens: "uniform(64,256)", OutputTokens: "128",
			SharedPrefix: SharedPrefix{Tokens: 50, Fraction: 1, Groups: 2}},
		{Name: "doc", Weight: 1, InputTokens: "2048", OutputTokens: "128", API: "completions", IgnoreEOS: ptr(false),
			Timeouts: Timeouts{Connect: 3 * time.Second, TTFT: 2 * time.Second, Total: time.Minute}},
		{Name: "photo", Weight: 1, InputTokens: "512", OutputTokens: "128", Images: Images{Count: 2, Size: "1920x1080", Format: "png"}},
	}
	if diff := cmp.Diff(want, p.Workload.Classes); diff != "" {
		t.Errorf("classes (-want +got):\n%s", diff)
	}
	if !cmp.Equal(p.Workload.LengthBuckets, []int{100, 1000}) || p.Workload.BadInput != (BadInput{Fraction: 0.1, MaxContext: 4096}) {
		t.Errorf("buckets %v bad input %+v", p.Workload.LengthBuckets, p.Workload.BadInput)
	}
	// The resolved plan writes the classes back and reads back the same.
	data, err := p.Redacted()
	if err != nil {
		t.Fatal(err)
	}
	again, err := Parse("plan.yaml", data)
	if err != nil {
		t.Fatalf("%v\n%s", err, data)
	}
	if diff := cmp.Diff(p, again, ignoreOrigin); diff != "" {
		t.Errorf("round trip (-first +again):\n%s\n%s", diff, data)
	}
}

func TestClassFlagErrors(t *testing.T) {
	t.Parallel()
	tests := []struct{ arg, want string }{
		{"weight=1", "needs a name"},                            // no name
		{"name=a,weight=heavy", `weight: "heavy" is not valid`}, // not a number
		{"name=a,colour=red", "colour: unknown key"},            // unknown key
		{"name=a,weight", "want key=value"},                     // a key without value
		{"name=a,images=two", `images: "two" is not valid`},     // not a count
	}
	for _, tt := range tests {
		fs := pflag.NewFlagSet("run", pflag.ContinueOnError)
		BindFlags(fs)
		err := fs.Parse([]string{"--class", tt.arg})
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("--class %s: error %v, want %q", tt.arg, err, tt.want)
		}
	}
}

// TestClassFlagKeysAccepted: every key the help and the error list is one
// --class takes, so the list cannot name a key setFlagKey lost.
func TestClassFlagKeysAccepted(t *testing.T) {
	t.Parallel()
	values := map[string]string{"weight": "1", "ignore_eos": "true", "prefix_tokens": "8", "prefix_fraction": "0.5",
		"prefix_groups": "2", "slo": "ttft<=1s", "slo_ttft_ms": "100", "slo_tpot_ms": "10", "slo_e2e_ms": "1000", "turns": "2",
		"connect_timeout": "1s", "ttft_timeout": "1s", "timeout": "1s", "images": "1", "documents": "8", "audio_seconds": "30"}
	for _, k := range classFlagKeys {
		v := values[k]
		if v == "" {
			v = "x"
		}
		var c Class
		if err := c.setFlagKey(k, v); err != nil {
			t.Errorf("--class %s=%s: %v", k, v, err)
		}
	}
}
