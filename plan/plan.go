// Package plan is the test plan: its YAML schema, the command-line overlay,
// defaults and validation. Errors name the field (and the YAML line when the
// value came from a file).
package plan

import "time"

// Plan is a fully described test. The zero value of each field means its
// documented default (see docs/plan.md); Load fills defaults and validates.
type Plan struct {
	// Name labels the run directory and reports.
	Name     string      `yaml:"name"`
	Target   Target      `yaml:"target"`
	Load     LoadOptions `yaml:"load"`
	Workload Workload    `yaml:"workload"`
	Output   Output      `yaml:"output"`

	// origin maps a field's YAML path to where its value came from
	// ("plan.yaml:7" or "--rate"), so that validation errors can point at
	// the line or flag to fix. Fields absent from it hold defaults.
	origin map[string]string
}

// setOrigin records where the field at path got its value.
func (p *Plan) setOrigin(path, source string) {
	if p.origin == nil {
		p.origin = make(map[string]string)
	}
	p.origin[path] = source
}

// Target says where and how requests are sent.
type Target struct {
	// URL is the API base, e.g. http://127.0.0.1:8000/v1.
	URL string `yaml:"url"`
	// Model is the model name sent with each request.
	Model string `yaml:"model"`
	// API is "chat" (default) or "completions".
	API string `yaml:"api"`
	// Stream asks for an SSE stream (default true).
	Stream *bool `yaml:"stream"`
	// IncludeUsage sets stream_options.include_usage (default true).
	IncludeUsage *bool `yaml:"include_usage"`
	// APIKeyEnv names an environment variable holding the key.
	APIKeyEnv string `yaml:"api_key_env"`
	// APIKeyFile names a file holding the key (surrounding whitespace trimmed).
	APIKeyFile string `yaml:"api_key_file"`
	// Headers are sent with every request.
	Headers map[string]string `yaml:"headers"`
	// Body holds extra JSON body fields passed through unchanged
	// (temperature, top_p, min_tokens, ...).
	Body map[string]any `yaml:"body"`
	// CAFile is a PEM bundle trusted in addition to the system roots.
	CAFile string `yaml:"ca_file"`
	// Insecure skips TLS certificate verification.
	Insecure bool     `yaml:"insecure"`
	Timeouts Timeouts `yaml:"timeouts"`
}

// Timeouts bound each request. Zero means the default.
type Timeouts struct {
	Connect time.Duration `yaml:"connect"` // default 10s
	TTFT    time.Duration `yaml:"ttft"`    // default 60s
	Total   time.Duration `yaml:"total"`   // default 10m
}

// LoadOptions says when requests are sent. Exactly one of Concurrency
// (closed loop) or Rate (open loop) is set. (The type is not called Load
// because that is the package's entry point.)
type LoadOptions struct {
	// Concurrency is the number of closed-loop virtual users.
	Concurrency int `yaml:"concurrency"`
	// ThinkTime is a closed-loop user's pause between requests: a duration
	// ("500ms"), "uniform(1s,5s)" or "exponential(2s)" (mean).
	ThinkTime string `yaml:"think_time"`
	// Rate is the open-loop arrival rate in requests per second.
	Rate float64 `yaml:"rate"`
	// Arrival is "constant", "poisson" (default for open loop) or "gamma".
	Arrival string `yaml:"arrival"`
	// Burstiness is the gamma shape factor: 1 (the default with gamma) is
	// Poisson, below 1 burstier. Only for Arrival "gamma".
	Burstiness float64 `yaml:"burstiness"`
	// MaxInFlight caps concurrent open-loop requests (0: no cap).
	// Requests waiting for a slot accumulate queue delay.
	MaxInFlight int `yaml:"max_in_flight"`
	// LateAfter marks an open-loop request late when it starts more than
	// this after its intended time (default 10ms).
	LateAfter time.Duration `yaml:"late_after"`
	// Duration stops issuing after this long (includes warm-up). Default
	// 1m when Requests is 0 too.
	Duration time.Duration `yaml:"duration"`
	// Requests stops after this many requests (includes warm-up).
	Requests int `yaml:"requests"`
	// Warmup excludes requests sent in the first Warmup of the run.
	Warmup time.Duration `yaml:"warmup"`
	// Grace is how long in-flight requests may finish after issuing stops
	// (default 30s).
	Grace time.Duration `yaml:"grace"`
}

// Workload says what is sent.
type Workload struct {
	// Seed makes the workload reproducible (default 1; 0 means the
	// default).
	Seed uint64 `yaml:"seed"`
	// InputTokens is the prompt length: "512" or "uniform(256,1024)".
	InputTokens string `yaml:"input_tokens"`
	// OutputTokens is max_tokens: "128" or "uniform(64,256)".
	OutputTokens string `yaml:"output_tokens"`
	// IgnoreEOS asks the server to generate exactly max_tokens (default true).
	IgnoreEOS *bool `yaml:"ignore_eos"`
}

// Output says where results go.
type Output struct {
	// Dir is the parent of run directories (default "runs").
	Dir string `yaml:"dir"`
}
