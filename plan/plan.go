// Package plan is the test plan: its YAML schema, the command-line overlay,
// defaults and validation. Errors name the field (and the YAML line when the
// value came from a file).
package plan

import (
	"time"

	"github.com/inferload/inferload/record"
	"github.com/inferload/inferload/schedule"
)

// Plan is a fully described test. The zero value of each field means its
// documented default (see docs/plan.md); Load fills defaults and validates.
type Plan struct {
	// Name labels the run directory and reports.
	Name     string      `yaml:"name"`
	Target   Target      `yaml:"target"`
	Load     LoadOptions `yaml:"load"`
	Workload Workload    `yaml:"workload"`
	Output   Output      `yaml:"output"`
	// Thresholds are pass/fail checks over summary figures in the
	// threshold language (record.ParseThreshold): "ttft_ms.p99 < 2000",
	// "ttft.p99 < 2s". A failed one makes the run exit with its own code
	// (see docs/report.md). Validate parses them once (Checks).
	Thresholds []string `yaml:"thresholds"`
	// AllowInvalid lets the thresholds gate a run that is NOT VALID (too
	// few samples, the load not achieved, a saturated client). Without
	// it such a run fails its gate with its own exit code, whatever its
	// thresholds say: a passed check on an untrustworthy run is no pass.
	AllowInvalid bool `yaml:"allow_invalid"`
	// Observe says what server, GPU and client telemetry is sampled beside
	// the load (docs/telemetry.md).
	Observe Observe `yaml:"observe"`
	// Compute declares the served model's size, so summary.json can
	// estimate FLOPs (plan/slo.go).
	Compute Compute `yaml:"compute"`
	// Env holds fields the user declares about the deployment (framework,
	// version, quantisation, max_num_seqs, ...), copied into env.json so
	// two runs' environments can be diffed.
	Env map[string]string `yaml:"env"`

	// origin maps a field's YAML path to where its value came from
	// ("plan.yaml:7" or "--rate"), so that validation errors can point at
	// the line or flag to fix. Fields absent from it hold defaults.
	origin map[string]string
	// checks are Thresholds as Validate parsed them.
	checks []record.Threshold
}

// Checks are the plan's thresholds parsed, as Validate parsed them; a plan
// whose thresholds changed since (or that was never validated) has them
// parsed now, so a gate is never skipped.
func (p *Plan) Checks() ([]record.Threshold, error) {
	if len(p.checks) == len(p.Thresholds) {
		return p.checks, nil
	}
	return record.ParseThresholds(p.Thresholds)
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
	// Replicas are more API bases serving the same model, as URL is: the
	// requests go to URL and each replica in turn (round-robin), a
	// conversation's turns to one replica, so a few replicas are tested
	// without a load balancer in front (BaseURLs).
	Replicas []string `yaml:"replicas"`
	// Model is the model name sent with each request.
	Model string `yaml:"model"`
	// API is "chat" (default) or "completions".
	API string `yaml:"api"`
	// Stream asks for an SSE stream (default true).
	Stream *bool `yaml:"stream"`
	// IncludeUsage sets stream_options.include_usage (default true).
	IncludeUsage *bool `yaml:"include_usage"`
	// Preflight sends one probe request before the load starts and stops
	// the run when it fails (default true; --no-preflight turns it off).
	Preflight *bool `yaml:"preflight"`
	// TraceContext sends every request's join key, a W3C traceparent and
	// an x-request-id, and keeps it in the record (default true).
	TraceContext *bool `yaml:"trace_context"`
	// KernelTimestamps stamps token events with the kernel's receive
	// timestamps where the system gives them (Linux), so the client's own
	// delay in reading is not in any latency (default true; false keeps
	// the user-space clock).
	KernelTimestamps *bool `yaml:"kernel_timestamps"`
	// HTTP2 speaks HTTP/2 to the target instead of HTTP/1.1: "h2" (over
	// TLS, by ALPN; an https URL) or "h2c" (cleartext, prior knowledge;
	// an http URL). Streams then share connections, and token events are
	// on the user-space clock (docs/plan.md).
	HTTP2 string `yaml:"http2"`
	// ThinkTags times text between <think> and </think> in the answer as
	// reasoning, for a reasoning model served without a reasoning parser
	// (default false: an answer may hold such text literally).
	ThinkTags bool `yaml:"think_tags"`
	// RevealAnswers sends each graded request's expected answer in the
	// X-Inferload-Expect-Answer header, for the built-in simulator's
	// planted accuracy drop (faults.answer_degrade). Off by default: a
	// real server must never be told the answer it is graded on.
	RevealAnswers bool `yaml:"reveal_answers"`
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
	// Triton names the tensors of the triton-infer API, and of triton-grpc
	// to a tensor model (Input set).
	Triton TritonTensors `yaml:"triton"`
	// HTTP is the templated http API's request and how its reply is read.
	HTTP HTTPAPI `yaml:"http"`
	// Retry is the client's retry policy (plan/retry.go); off by default.
	Retry Retry `yaml:"retry"`
}

// TritonTensors names a triton-infer model's tensors (its config.pbtxt,
// or GET /v2/models/{model}).
type TritonTensors struct {
	// Input is the BYTES input tensor the prompt goes into (default TEXT).
	Input string `yaml:"input"`
	// Output is the output tensor asked for and checked (default: none
	// asked for by name, the reply's first).
	Output string `yaml:"output"`
}

// HTTPAPI is the templated http API (protocol.HTTPAPIOptions): target.url
// is the service's base, Path is joined to it.
type HTTPAPI struct {
	// Method is GET, POST (default) or PUT.
	Method string `yaml:"method"`
	// Path is joined to target.url, e.g. /classify.
	Path string `yaml:"path"`
	// Body is the request body template, with {{prompt}},
	// {{input_tokens}}, {{max_tokens}}, {{class}} and {{request_id}}.
	Body string `yaml:"body"`
	// Response is none, json (default), sse, ndjson or chunked.
	Response string `yaml:"response"`
	// Text, Tokens and Error are dot paths into the reply (or each
	// streamed object): the output text, an output token count and an
	// error message.
	Text   string `yaml:"text"`
	Tokens string `yaml:"tokens"`
	Error  string `yaml:"error"`
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
	// SpawnRate is how many users per second a closed loop's stage adds
	// when the load rises (a stage of a staged run, a sweep's step, a
	// change from the live page); 0, the default, spreads the users a
	// stage adds over the first half of its warm-up
	// (schedule.SpawnRate). Users a stage keeps go on without a pause,
	// and users it drops leave as their request in flight is answered.
	SpawnRate float64 `yaml:"spawn_rate"`
	// Stages replace Duration with a list of steps, "30s@8" (hold 8
	// users, or 8 requests/s in an open loop, for 30s) or ramps, "ramp
	// 30s@32" (move linearly from the previous stage's load to 32). Each
	// stage discards its own first Warmup (experiment/stages.go).
	Stages []string `yaml:"stages"`
	// Trace, when its path is set, replays a request log: its timestamps
	// are the arrival schedule and its lengths the requests' (an open loop).
	Trace Trace `yaml:"trace"`
	// Segment runs one of several disjoint parts of the load, "I/N" with a
	// 0-based I, for a run spread over N machines (schedule.Segment): users,
	// arrivals, trace rows and requests are striped, so the N segments
	// together are the whole run. Empty: the whole run.
	Segment string `yaml:"segment"`
	// FLOPsPerS paces an open loop by compute instead of requests: the
	// arrival rate is this ÷ the workload's mean FLOPs per request (needs
	// compute.params_b).
	FLOPsPerS float64 `yaml:"flops_per_s"`
}

// Trace names a request log to replay and how.
type Trace struct {
	// Path of the trace file.
	Path string `yaml:"path"`
	// Format is azure, burstgpt, csv, jsonl, mooncake, dynamo or weka
	// ("" guesses).
	Format string `yaml:"format"`
	// Speed divides every gap between arrivals (2: twice the rate;
	// default 1).
	Speed float64 `yaml:"speed"`
	// Loop replays the trace again when it runs out.
	Loop bool `yaml:"loop"`
	// MaxGap caps every gap between arrivals, as replayed (after Speed);
	// 0 keeps them all.
	MaxGap time.Duration `yaml:"max_gap"`
	// BlockTokens is the tokens a Mooncake hash id stands for (0:
	// schedule.DefaultBlockTokens, 512); a Dynamo or Weka trace records
	// its own, which this must match when set.
	BlockTokens int `yaml:"block_tokens"`
}

// Shape is the kind of load a plan applies: what decides when its
// requests are sent. LoadOptions.Shape derives it once from the fields
// that set it; the loop mode (Mode), the load's level (Level) and the
// engine phase experiment builds all follow from it. Stages are not a
// shape of their own: they move a users or a rate load's level over time.
type Shape string

// The load shapes, each set by its own fields. A valid plan sets exactly
// one (validation refuses two); Shape reads them in this order.
const (
	// ShapeTrace replays a request log: its timestamps are the arrivals
	// (load.trace; an open loop).
	ShapeTrace Shape = "trace"
	// ShapeCompute paces arrivals by compute: load.flops_per_s ÷ the
	// workload's mean FLOPs per request (an open loop).
	ShapeCompute Shape = "compute"
	// ShapeRate sends arrivals at load.rate requests/s (an open loop).
	ShapeRate Shape = "rate"
	// ShapeUsers runs load.concurrency closed-loop users, each sending its
	// next request once its last reply has ended (and it has thought).
	ShapeUsers Shape = "users"
)

// Shape is the kind of load l applies: the one place it is derived from
// the fields that set it.
func (l *LoadOptions) Shape() Shape {
	switch {
	case l.Trace.Path != "":
		return ShapeTrace
	case l.FLOPsPerS > 0:
		return ShapeCompute
	case l.Rate > 0:
		return ShapeRate
	}
	return ShapeUsers
}

// OpenLoop reports whether requests arrive on a schedule (a rate, a trace
// or compute pacing) rather than from closed-loop users.
func (l *LoadOptions) OpenLoop() bool { return l.Shape() != ShapeUsers }

// Level is the constant load the plan holds, in its shape's unit: users
// for ShapeUsers, requests/s for ShapeRate; 0 for a trace or compute
// pacing, whose rate is not one number the plan states.
func (l *LoadOptions) Level() float64 {
	switch l.Shape() {
	case ShapeUsers:
		return float64(l.Concurrency)
	case ShapeRate:
		return l.Rate
	}
	return 0
}

// PlaysOnce reports whether the load ends by itself: a trace replayed
// once stops with its last request, without a duration or a count.
func (l *LoadOptions) PlaysOnce() bool { return l.Shape() == ShapeTrace && !l.Trace.Loop }

// ArrivalProcess is the arrival process of the load's open loops:
// load.arrival, or Poisson, the open-loop default (a closed-loop plan
// whose sweep or fleet runs rates gets it too).
func (l *LoadOptions) ArrivalProcess() string {
	if l.Arrival != "" {
		return l.Arrival
	}
	return schedule.Poisson
}

// MaxUsers is the most closed-loop users the load runs at once, its stages
// included (0 for an open loop).
func (l *LoadOptions) MaxUsers() int {
	if l.Mode() != record.ModeClosed {
		return 0
	}
	n := l.Concurrency
	stages, _ := schedule.ParseStages(l.Stages, l.Mode()) // validated with the plan
	for _, st := range stages {
		n = max(n, int(max(st.From, st.Target)))
	}
	return n
}

// Mode is the loop the load runs in, record.ModeOpen or record.ModeClosed
// (OpenLoop): the one place a run's mode is derived, for the live run,
// its stages and a rebuild from plan.yaml alike.
func (l *LoadOptions) Mode() string {
	if l.OpenLoop() {
		return record.ModeOpen
	}
	return record.ModeClosed
}

// scheduled reports whether arrivals come from a process at a rate (given
// in requests/s or in FLOP/s), which load.arrival and burstiness shape.
func (l *LoadOptions) scheduled() bool { return l.Rate > 0 || l.FLOPsPerS > 0 }

// Workload says what is sent.
type Workload struct {
	// Seed makes the workload reproducible (default 1; 0 means the
	// default).
	Seed uint64 `yaml:"seed"`
	// Salt opens every prompt with a few words drawn from it, so a prefix
	// cache left warm by another run serves none of this run's prompts:
	// "run" (default) draws a new salt for every run, "off" sends none (the
	// seed's prompts exactly), any other word is a fixed salt (a recorded
	// run's, to replay its prompts). The run directory's plan.yaml holds
	// the salt the run used.
	Salt string `yaml:"salt"`
	// InputTokens is the prompt length: "512" or "uniform(256,1024)".
	InputTokens string `yaml:"input_tokens"`
	// OutputTokens is max_tokens: "128" or "uniform(64,256)".
	OutputTokens string `yaml:"output_tokens"`
	// IgnoreEOS asks the server to generate exactly max_tokens (default true).
	IgnoreEOS *bool `yaml:"ignore_eos"`
	// SharedPrefix opens prompts of the default class with a shared
	// prefix (a system prompt) for prefix-cache tests.
	SharedPrefix SharedPrefix `yaml:"shared_prefix"`
	// Classes, when set, replace the single default class that
	// input_tokens and output_tokens describe with several classes drawn
	// by weight.
	Classes []Class `yaml:"classes"`
	// LengthBuckets are the upper bounds, in prompt tokens, of the input
	// length buckets the summary breaks results down by (default 256,
	// 1024, 4096: ≤256, ≤1024, ≤4096 and >4096).
	LengthBuckets []int `yaml:"length_buckets"`
	// BadInput mixes deliberately bad requests into the run as their own
	// class.
	BadInput BadInput `yaml:"bad_input"`
	// Tokenizer measures and builds prompts: "cl100k_base" (default),
	// "o200k_base", or the path of a Hugging Face tokenizer.json or a
	// SentencePiece tokenizer.model.
	Tokenizer string `yaml:"tokenizer"`
	// Language of synthetic prompts: "en" (default) or "zh".
	Language string `yaml:"language"`
	// Dataset, when its path is set, supplies the default class's prompts.
	Dataset Dataset `yaml:"dataset"`
	// Images adds synthetic images to every request (chat and messages
	// APIs, or an http template's {{image}});
	// with classes, set it per class instead.
	Images Images `yaml:"images"`
	// Documents are sent with every request of the rerank and score APIs,
	// which score the prompt (the query) against them; with classes, set
	// it per class instead.
	Documents Documents `yaml:"documents"`
	// Audio is uploaded with every request of the transcriptions API;
	// with classes, set it per class instead.
	Audio Audio `yaml:"audio"`
	// SLO is every class's service-level objective unless the class sets
	// its own bounds; goodput counts requests that met it.
	SLO record.SLO `yaml:"slo"`
}

// Dataset names a file of prompts and how to cut it down.
type Dataset struct {
	// Path of the dataset file.
	Path string `yaml:"path"`
	// Format is sharegpt, openai-jsonl, jsonl or csv ("" guesses).
	Format string `yaml:"format"`
	// Sample keeps this many entries, preserving the length distribution
	// (0: all).
	Sample int `yaml:"sample"`
	// MinInputTokens and MaxInputTokens drop entries outside the range
	// (0: no bound).
	MinInputTokens int `yaml:"min_input_tokens"`
	MaxInputTokens int `yaml:"max_input_tokens"`
}

// Images asks for Count synthetic images of Size ("1920x1080") in Format
// (jpeg, the default, or png) in every request, sent as image_url data
// URIs. They are rendered once, from the seed, before the run starts.
type Images struct {
	Count  int    `yaml:"count"`
	Size   string `yaml:"size"`
	Format string `yaml:"format"`
}

// Documents asks for Count documents of Tokens tokens each ("256" or
// "uniform(64,512)", drawn per document) with every request, for the
// rerank and score APIs.
type Documents struct {
	Count  int    `yaml:"count"`
	Tokens string `yaml:"tokens"`
}

// Audio asks for a synthetic WAV of Seconds seconds ("30" or
// "uniform(5,60)", whole seconds drawn per request) with every request,
// for the transcriptions API.
type Audio struct {
	Seconds string `yaml:"seconds"`
}

// Class is one request class of workload.classes.
type Class struct {
	// Name labels the class in records and reports (required).
	Name string `yaml:"name"`
	// Weight is the class's share of requests relative to the other
	// classes (required, positive).
	Weight float64 `yaml:"weight"`
	// InputTokens is the class's prompt length (default 512).
	InputTokens string `yaml:"input_tokens"`
	// OutputTokens is the class's max_tokens (default 128).
	OutputTokens string `yaml:"output_tokens"`
	// IgnoreEOS overrides workload.ignore_eos for the class.
	IgnoreEOS *bool `yaml:"ignore_eos"`
	// Language overrides workload.language for the class.
	Language string `yaml:"language"`
	// API overrides target.api for the class.
	API string `yaml:"api"`
	// Body fields are merged over target.body for the class's requests.
	Body map[string]any `yaml:"body"`
	// SharedPrefix opens the class's prompts with a shared prefix.
	SharedPrefix SharedPrefix `yaml:"shared_prefix"`
	// Dataset, when its path is set, supplies the class's prompts.
	Dataset Dataset `yaml:"dataset"`
	// Images adds synthetic images to each of the class's requests (chat
	// and messages APIs, or an http template's {{image}}).
	Images Images `yaml:"images"`
	// Documents adds documents to each of the class's requests (rerank
	// and score APIs).
	Documents Documents `yaml:"documents"`
	// Audio adds a synthetic WAV to each of the class's requests
	// (transcriptions API).
	Audio Audio `yaml:"audio"`
	// Turns, above 1, makes the class conversations of Turns requests
	// whose history grows per turn (default 0: single requests): each
	// closed-loop user holds one at a time; in an open loop each arrival
	// starts one.
	Turns int `yaml:"turns"`
	// History is what a conversation's history carries for the
	// assistant's turns: "replies" (the default) the server's real
	// replies, "synthetic" text of the asked length, which sends
	// byte-identical bodies for the same seed whatever the server says.
	History string `yaml:"history"`
	// SLO overrides workload.slo bound by bound for the class.
	SLO record.SLO `yaml:"slo"`
	// Timeouts override target.timeouts bound by bound for the class's
	// requests (zero: the target's).
	Timeouts Timeouts `yaml:"timeouts"`
	// Chain, when set, makes each of the class's requests a sequence of
	// calls (embeddings, retrieval, chat, ...; plan/chain.go).
	Chain []ChainStep `yaml:"chain"`
	// Graph, when set, makes each of the class's requests a task of calls
	// with fan-out and fan-in (an agent; plan/graph.go).
	Graph []GraphNode `yaml:"graph"`
}

// SharedPrefix is a prefix of Tokens tokens put in front of a Fraction of
// the prompts, drawn from Groups distinct prefixes.
type SharedPrefix struct {
	// Tokens is the prefix length; 0 means no prefix.
	Tokens int `yaml:"tokens"`
	// Fraction of requests that carry a prefix (default 1: all).
	Fraction float64 `yaml:"fraction"`
	// Groups is the number of distinct prefixes (default 1).
	Groups int `yaml:"groups"`
}

// BadInput configures the bad-input class: empty prompts, prompts beyond
// the context window, odd Unicode, max_tokens 0 or huge. For them a 4xx
// reply counts as a pass, a 5xx or a timeout as a failure.
type BadInput struct {
	// Fraction of all requests that are bad input (default 0: none).
	Fraction float64 `yaml:"fraction"`
	// MaxContext is the target model's context window in tokens
	// (required with a fraction).
	MaxContext int `yaml:"max_context"`
}

// Output says where results go.
type Output struct {
	// Dir is the parent of run directories (default "runs").
	Dir string `yaml:"dir"`
}

// Observe configures telemetry. The zero value scrapes the target's
// /metrics every second, detects the server kind and samples local GPUs.
type Observe struct {
	// Scrape is a comma-separated list of Prometheus endpoints (default:
	// the target URL's scheme and host + /metrics; "off" scrapes nothing).
	Scrape string `yaml:"scrape"`
	// Server is the metric map: auto (default), vllm, sglang, tgi, triton,
	// llamacpp, dcgm or node.
	Server string `yaml:"server"`
	// Interval between samples (default 1s).
	Interval time.Duration `yaml:"interval"`
	// Metrics is a comma-separated list of extra metric names to record.
	Metrics string `yaml:"metrics"`
	// GPU samples local GPUs through NVML or nvidia-smi (default true).
	GPU *bool `yaml:"gpu"`
	// Notes are manual annotations keyed by run-clock offset ("30s":
	// "cache flushed"), written to events.jsonl when the run starts.
	Notes map[string]string `yaml:"notes"`
	// OTLPListen is the address an OTLP trace receiver listens on during
	// the run (e.g. ":4317"), for a server started with
	// --otlp-traces-endpoint; empty listens nowhere.
	OTLPListen string `yaml:"otlp_listen"`
	// OTLPWait is how long after the last request the receiver waits for
	// the spans still to come (default DefaultOTLPWait when listening).
	OTLPWait time.Duration `yaml:"otlp_wait"`
}
