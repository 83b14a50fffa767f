package plan

import (
	"errors"
	"io/fs"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const testKey = "sk-live-abcdef123456"

func TestAPIKey(t *testing.T) {
	t.Parallel()
	env := map[string]string{"GOOD": testKey, "PADDED": " " + testKey + "\n", "EMPTY": "", "NEWLINE": "sk-a\nsk-b"}
	files := map[string]string{"key.txt": testKey + "\n", "empty.txt": "  \n", "two-lines.txt": testKey + "\n" + testKey}
	getenv := func(k string) string { return env[k] }
	readFile := func(name string) ([]byte, error) {
		s, ok := files[name]
		if !ok {
			return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
		}
		return []byte(s), nil
	}
	tests := []struct {
		env, file string
		want      string
		wantErr   string
	}{
		// No key configured: no key, no error.
		{"", "", "", ""},
		// From the environment.
		{"GOOD", "", testKey, ""},
		// Surrounding whitespace is trimmed.
		{"PADDED", "", testKey, ""},
		// An unset variable names the variable.
		{"MISSING", "", "", "environment variable MISSING is unset or empty"},
		// An empty variable is the same mistake.
		{"EMPTY", "", "", "environment variable EMPTY is unset or empty"},
		// A key with a line break inside would break the header.
		{"NEWLINE", "", "", "contains a line break"},
		// From a file, trailing newline trimmed.
		{"", "key.txt", testKey, ""},
		// A missing file is reported with its name.
		{"", "nope.txt", "", "target.api_key_file: open nope.txt: file does not exist"},
		// An empty file is reported.
		{"", "empty.txt", "", "target.api_key_file: empty.txt is empty"},
		// Two keys in a file is not one key.
		{"", "two-lines.txt", "", "contains a line break"},
	}
	for _, tt := range tests {
		p := closedPlan()
		p.Target.APIKeyEnv, p.Target.APIKeyFile = tt.env, tt.file
		got, err := p.APIKey(getenv, readFile)
		if got != tt.want {
			t.Errorf("env %q file %q: key %q, want %q", tt.env, tt.file, got, tt.want)
		}
		if (err == nil) != (tt.wantErr == "") || err != nil && !strings.Contains(err.Error(), tt.wantErr) {
			t.Errorf("env %q file %q: error %v, want %q", tt.env, tt.file, err, tt.wantErr)
		}
		if err != nil && strings.Contains(err.Error(), "sk-") {
			t.Errorf("error leaks the key: %v", err)
		}
	}
}

func TestLoadChecksKeyVariable(t *testing.T) {
	t.Parallel()
	fl := newFlags(t, "--url", "http://127.0.0.1:1/v1", "--concurrency", "1", "--api-key-env", "LLM_KEY")
	_, err := Load("", fl, func(string) string { return "" })
	if err == nil || err.Error() != "--api-key-env: environment variable LLM_KEY is unset or empty" {
		t.Errorf("Load = %v", err)
	}
	var fe *FieldError
	if !errors.As(err, &fe) || fe.Field != "target.api_key_env" {
		t.Errorf("error is not a FieldError for target.api_key_env: %#v", err)
	}
}

func TestLooksSecret(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		want bool
	}{
		{"Authorization", true},        // the standard credential header
		{"Proxy-Authorization", true},  // and its proxy twin
		{"X-Api-Key", true},            // last word "key"
		{"api-key", true},              // Azure OpenAI's header
		{"apikey", true},               // no separator
		{"access_token", true},         // last word "token"
		{"X-Amz-Security-Token", true}, // cloud session tokens
		{"Cookie", true},               // session cookies
		{"client_secret", true},        // contains "secret"
		{"x-auth", true},               // last word "auth"
		{"max_tokens", false},          // an ordinary request field
		{"min_tokens", false},          // likewise
		{"stop_token_ids", false},      // "token" not last
		{"temperature", false},         // nothing secret
		{"X-Request-Id", false},        // tracing header
		{"", false},                    // degenerate
	}
	for _, tt := range tests {
		if got := looksSecret(tt.name); got != tt.want {
			t.Errorf("looksSecret(%q) = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestRedacted(t *testing.T) {
	t.Parallel()
	p, err := Parse("plan.yaml", []byte(`
name: secrets
target:
  url: https://bob:hunter2@127.0.0.1:8443/v1
  api_key_env: LLM_KEY
  stream: false
  headers:
    Authorization: Bearer sk-header-secret
    X-Api-Key: sk-other-secret
    X-Tenant: perf
  body:
    temperature: 0.5
    max_tokens: 7
    metadata: {session_token: sk-nested-secret, team: a}
    stop: ["true", "\n"]
load:
  rate: 2.5
  arrival: gamma
  burstiness: 0.25
  duration: 1h30m
workload:
  seed: 18446744073709551615
  input_tokens: uniform(1,9)
`))
	if err != nil {
		t.Fatal(err)
	}
	out, err := p.Redacted()
	if err != nil {
		t.Fatal(err)
	}
	text := string(out)
	// No secret survives, wherever it was.
	for _, secret := range []string{"hunter2", "sk-"} {
		if strings.Contains(text, secret) {
			t.Errorf("plan.yaml leaks %q:\n%s", secret, text)
		}
	}
	// Ordinary values stay, durations read like durations.
	for _, keep := range []string{"X-Tenant: perf", "max_tokens: 7", "team: a", "duration: 1h30m", "bob:REDACTED@", "api_key_env: LLM_KEY", "stream: false"} {
		if !strings.Contains(text, keep) {
			t.Errorf("plan.yaml lost %q:\n%s", keep, text)
		}
	}
	// The redacted file is a valid plan equal to the original except for
	// the redacted values.
	back, err := Parse("plan.yaml", out)
	if err != nil {
		t.Fatalf("redacted plan does not load: %v\n%s", err, text)
	}
	p.Target.URL = "https://bob:REDACTED@127.0.0.1:8443/v1"
	p.Target.Headers["Authorization"], p.Target.Headers["X-Api-Key"] = Redaction, Redaction
	p.Target.Body["metadata"].(map[string]any)["session_token"] = Redaction
	if diff := cmp.Diff(p, back, ignoreOrigin); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
}

// TestURLQueryRefused: a base URL with a query is refused (a key put there
// by mistake would reach logs), and the message never shows the query;
// a port out of range is refused at validation, not per request.
func TestURLQueryRefused(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ url, want string }{
		{"http://127.0.0.1:8000/v1?api_key=sk-live-0123456789", "must not have a query"}, // a key in the query
		{"http://127.0.0.1:8000/v1?k=sk-live-0123456789", "must not have a query"},       // a key under an innocent name
		{"http://127.0.0.1:99999/v1", "not between 1 and 65535"},                         // no such port
		{"http://127.0.0.1:0/v1", "not between 1 and 65535"},                             // nor this one
	} {
		_, err := Parse("plan.yaml", []byte("target: {url: \""+tt.url+"\"}\n"))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: got %v, want %q", tt.url, err, tt.want)
			continue
		}
		if strings.Contains(err.Error(), "sk-live") {
			t.Errorf("%s: the error prints the secret: %v", tt.url, err)
		}
	}
}

// TestSecrets: every credential the plan sends is listed for redaction,
// with a bearer token also on its own; ordinary header values are not.
func TestSecrets(t *testing.T) {
	t.Parallel()
	p, err := Parse("plan.yaml", []byte(`
target:
  url: http://bob:hunter22@127.0.0.1:8000/v1
  headers: {Authorization: Bearer sk-hdr-1234, X-Api-Key: xk-5678, X-Tenant: perf}
  body: {metadata: {session_token: st-9999}}
load: {concurrency: 1}
`))
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(p.Secrets("sk-key-0000"), " ")
	for _, want := range []string{"sk-key-0000", "Bearer sk-hdr-1234", "sk-hdr-1234", "xk-5678", "st-9999", "hunter22"} {
		if !strings.Contains(got, want) {
			t.Errorf("Secrets %q lacks %q", got, want)
		}
	}
	if strings.Contains(got, "perf") {
		t.Errorf("Secrets %q lists an ordinary header", got)
	}
}
