package plan

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/pflag"
)

// Flags are the command-line options that overlay a plan file: one flag
// per plan option. Only flags the user actually gave override the file;
// the defaults shown in --help are applied later, by ApplyDefaults.
type Flags struct {
	fs       *pflag.FlagSet
	bindings []binding
}

// binding ties a flag to the plan field it sets.
type binding struct {
	flag  string // without "--"
	path  string // YAML path of the field
	apply func(p *Plan)
}

// BindFlags registers every plan option on fs and returns the handle that
// later applies the ones the user set.
func BindFlags(fs *pflag.FlagSet) *Flags {
	f := &Flags{fs: fs}
	f.bindTarget()
	f.bindTLSAndTimeouts()
	f.bindRetry()
	f.bindLoad()
	f.bindWorkload()
	bind(f, "name", "name", fs.String("name", DefaultName, "label for the run directory and reports (letters, digits, . _ -)"), func(p *Plan) *string { return &p.Name })
	f.bindThresholds()
	f.bindSLOAndCompute()
	f.bindObserve()
	bind(f, "out", "output.dir", fs.String("out", DefaultOutputDir, "parent directory of run directories"), func(p *Plan) *string { return &p.Output.Dir })
	return f
}

// bindAPIOptions binds the triton-infer tensor names and the templated
// http API.
func (f *Flags) bindAPIOptions() {
	fs := f.fs
	bind(f, "triton-input", "target.triton.input", fs.String("triton-input", "", "triton-infer, and triton-grpc to a tensor model: the BYTES input tensor the prompt goes into (triton-infer's default TEXT)"), func(p *Plan) *string { return &p.Target.Triton.Input })
	bind(f, "triton-output", "target.triton.output", fs.String("triton-output", "", "triton-infer, and triton-grpc with --triton-input: the output tensor asked for and checked (default: the reply's first)"), func(p *Plan) *string { return &p.Target.Triton.Output })
	bind(f, "http-method", "target.http.method", fs.String("http-method", "", "http API: GET, POST (default) or PUT"), func(p *Plan) *string { return &p.Target.HTTP.Method })
	bind(f, "http-path", "target.http.path", fs.String("http-path", "", "http API: path joined to --url, e.g. /classify"), func(p *Plan) *string { return &p.Target.HTTP.Path })
	bind(f, "http-body", "target.http.body", fs.String("http-body", "", `http API: body template, e.g. '{"text":"{{prompt}}"}' ({{prompt}}, {{input_tokens}}, {{max_tokens}}, {{class}}, {{request_id}})`), func(p *Plan) *string { return &p.Target.HTTP.Body })
	bind(f, "http-response", "target.http.response", fs.String("http-response", "", "http API: reply mode: none, json (default), sse, ndjson or chunked"), func(p *Plan) *string { return &p.Target.HTTP.Response })
	bind(f, "http-text", "target.http.text", fs.String("http-text", "", "http API: dot path of the output text in the reply or each streamed object, e.g. choices.0.text"), func(p *Plan) *string { return &p.Target.HTTP.Text })
	bind(f, "http-tokens", "target.http.tokens", fs.String("http-tokens", "", "http API: dot path of an output token count, e.g. usage.completion_tokens"), func(p *Plan) *string { return &p.Target.HTTP.Tokens })
	bind(f, "http-error", "target.http.error", fs.String("http-error", "", "http API: dot path of an error message, e.g. error.message"), func(p *Plan) *string { return &p.Target.HTTP.Error })
}

func (f *Flags) bindTarget() {
	fs := f.fs
	bind(f, "url", "target.url", fs.String("url", "", "API base URL, e.g. http://127.0.0.1:8000/v1 (required)"), func(p *Plan) *string { return &p.Target.URL })
	replicas := fs.StringArray("replica", nil, "another API base URL serving the same model: requests go to --url and each replica in turn, a conversation's turns to one (repeatable; replaces target.replicas)")
	f.add("replica", "target.replicas", func(p *Plan) { p.Target.Replicas = append([]string(nil), *replicas...) })
	bind(f, "model", "target.model", fs.String("model", "", "model name sent in each request"), func(p *Plan) *string { return &p.Target.Model })
	bind(f, "api", "target.api", fs.String("api", DefaultAPI, "API to call: chat (/chat/completions), completions (/completions), embeddings, images (/images/generations), or a server's native API: tgi, ollama, ollama-generate, triton, torchserve, triton-infer (KServe v2 tensors) or triton-grpc (Triton's KServe v2 gRPC, --url http://host:8001), or http (templated: --http-*) (--url is then the server's root, e.g. http://127.0.0.1:8080)"), func(p *Plan) *string { return &p.Target.API })
	f.bindAPIOptions()
	bindOptBool(f, "stream", "target.stream", fs.Bool("stream", true, "ask for a streamed (SSE) reply"), func(p *Plan) **bool { return &p.Target.Stream })
	bindOptBool(f, "include-usage", "target.include_usage", fs.Bool("include-usage", true, "ask a stream to end with token usage (stream_options.include_usage)"), func(p *Plan) **bool { return &p.Target.IncludeUsage })
	noPreflight := fs.Bool("no-preflight", false, "start the load without the probe request that checks the target first")
	f.add("no-preflight", "target.preflight", func(p *Plan) {
		v := !*noPreflight
		p.Target.Preflight = &v
	})
	bindOptBool(f, "kernel-timestamps", "target.kernel_timestamps", fs.Bool("kernel-timestamps", true, "stamp token events with the kernel's receive timestamps where supported (Linux), so the client's own read delay is not in TTFT/ITL"), func(p *Plan) **bool { return &p.Target.KernelTimestamps })
	bindOptBool(f, "trace-context", "target.trace_context", fs.Bool("trace-context", true, "send each request's join key (traceparent, x-request-id) and keep it in the record"), func(p *Plan) **bool { return &p.Target.TraceContext })
	bind(f, "api-key-env", "target.api_key_env", fs.String("api-key-env", "", "environment variable holding the API key (sent as a Bearer token)"), func(p *Plan) *string { return &p.Target.APIKeyEnv })
	bind(f, "api-key-file", "target.api_key_file", fs.String("api-key-file", "", "file holding the API key (sent as a Bearer token)"), func(p *Plan) *string { return &p.Target.APIKeyFile })

	headers := &pairs{kind: "header"}
	fs.Var(headers, "header", "extra HTTP header name=value for every request (repeatable)")
	f.add("header", "target.headers", func(p *Plan) { headers.applyHeaders(p) })
	body := &pairs{kind: "body field"}
	fs.Var(body, "body", "extra JSON body field name=value, value parsed as JSON when valid, else a string (repeatable), e.g. temperature=0.7")
	f.add("body", "target.body", func(p *Plan) { body.applyBody(p) })
}

func (f *Flags) bindTLSAndTimeouts() {
	fs := f.fs
	bind(f, "ca-file", "target.ca_file", fs.String("ca-file", "", "PEM file of CA certificates to trust besides the system ones"), func(p *Plan) *string { return &p.Target.CAFile })
	bind(f, "http2", "target.http2", fs.String("http2", "", "speak HTTP/2: h2 (over TLS, an https URL) or h2c (cleartext with prior knowledge, an http URL); streams share connections and events use the user-space clock"), func(p *Plan) *string { return &p.Target.HTTP2 })
	bind(f, "reveal-answers", "target.reveal_answers", fs.Bool("reveal-answers", false, "send each graded request's expected answer in a header, for the built-in simulator's planted accuracy drop only (never against a real server)"), func(p *Plan) *bool { return &p.Target.RevealAnswers })
	bind(f, "think-tags", "target.think_tags", fs.Bool("think-tags", false, "time text between <think> and </think> in the answer as reasoning (a reasoning model without a reasoning parser)"), func(p *Plan) *bool { return &p.Target.ThinkTags })
	bind(f, "insecure", "target.insecure", fs.Bool("insecure", false, "skip TLS certificate verification"), func(p *Plan) *bool { return &p.Target.Insecure })
	bind(f, "connect-timeout", "target.timeouts.connect", fs.Duration("connect-timeout", DefaultConnectTimeout, "limit on connecting (TCP and TLS)"), func(p *Plan) *time.Duration { return &p.Target.Timeouts.Connect })
	bind(f, "ttft-timeout", "target.timeouts.ttft", fs.Duration("ttft-timeout", DefaultTTFTTimeout, "limit from sending to the first token"), func(p *Plan) *time.Duration { return &p.Target.Timeouts.TTFT })
	bind(f, "timeout", "target.timeouts.total", fs.Duration("timeout", DefaultTotalTimeout, "limit on a whole request"), func(p *Plan) *time.Duration { return &p.Target.Timeouts.Total })
}

func (f *Flags) bindLoad() {
	fs := f.fs
	bind(f, "concurrency", "load.concurrency", fs.Int("concurrency", 0, "closed loop: number of users, each sending its next request when the last one ends"), func(p *Plan) *int { return &p.Load.Concurrency })
	bind(f, "think-time", "load.think_time", fs.String("think-time", "", "closed loop: pause between a user's requests: 500ms, uniform(1s,5s) or exponential(2s)"), func(p *Plan) *string { return &p.Load.ThinkTime })
	bind(f, "rate", "load.rate", fs.Float64("rate", 0, "open loop: requests per second, on a fixed schedule whatever the latency"), func(p *Plan) *float64 { return &p.Load.Rate })
	bind(f, "arrival", "load.arrival", fs.String("arrival", DefaultArrival, "open loop: arrival process: constant, poisson or gamma"), func(p *Plan) *string { return &p.Load.Arrival })
	bind(f, "burstiness", "load.burstiness", fs.Float64("burstiness", DefaultBurstiness, "gamma arrivals: 1 is Poisson, below 1 burstier, above 1 smoother"), func(p *Plan) *float64 { return &p.Load.Burstiness })
	bind(f, "max-in-flight", "load.max_in_flight", fs.Int("max-in-flight", 0, "open loop: cap on concurrent requests; waiting ones count as queue delay (0: no cap)"), func(p *Plan) *int { return &p.Load.MaxInFlight })
	bind(f, "late-after", "load.late_after", fs.Duration("late-after", DefaultLateAfter, "open loop: count a request late when it starts this long after its intended time"), func(p *Plan) *time.Duration { return &p.Load.LateAfter })
	bind(f, "duration", "load.duration", fs.Duration("duration", 0, "stop issuing after this long, warm-up included (default 1m when --requests is not set)"), func(p *Plan) *time.Duration { return &p.Load.Duration })
	bind(f, "requests", "load.requests", fs.Int("requests", 0, "stop issuing after this many requests, warm-up included"), func(p *Plan) *int { return &p.Load.Requests })
	bind(f, "warmup", "load.warmup", fs.Duration("warmup", 0, "leave requests sent in this first part of the run out of the statistics"), func(p *Plan) *time.Duration { return &p.Load.Warmup })
	bind(f, "segment", "load.segment", fs.String("segment", "", "run one part of a load spread over N machines: I/N with a 0-based I (e.g. $JOB_COMPLETION_INDEX/8); the N parts together are the whole run"), func(p *Plan) *string { return &p.Load.Segment })
	stages := fs.StringArray("stage", nil, "a load stage, 30s@8 (hold 8 users or 8 requests/s) or 'ramp 30s@32' (move linearly to 32); repeatable, in order; replaces --duration")
	f.add("stage", "load.stages", func(p *Plan) { p.Load.Stages = append([]string(nil), *stages...) })
	bind(f, "spawn-rate", "load.spawn_rate", fs.Float64("spawn-rate", 0, "closed loop: users per second a stage adds when the load rises (0: spread them over the first half of the warm-up)"), func(p *Plan) *float64 { return &p.Load.SpawnRate })
	bind(f, "grace", "load.grace", fs.Duration("grace", DefaultGrace, "time in-flight requests get to finish once issuing stops"), func(p *Plan) *time.Duration { return &p.Load.Grace })
}

func (f *Flags) bindWorkload() {
	fs := f.fs
	bind(f, "seed", "workload.seed", fs.Uint64("seed", DefaultSeed, "seed of prompts, lengths and arrivals: the same seed sends the same requests"), func(p *Plan) *uint64 { return &p.Workload.Seed })
	bind(f, "input-tokens", "workload.input_tokens", fs.String("input-tokens", DefaultInputTokens, "prompt length in tokens: 512, uniform(256,1024) or buckets(128:7,512:2,2048:1)"), func(p *Plan) *string { return &p.Workload.InputTokens })
	bind(f, "output-tokens", "workload.output_tokens", fs.String("output-tokens", DefaultOutputTokens, "max_tokens asked for: 128, uniform(64,256) or buckets(128:1,512:1)"), func(p *Plan) *string { return &p.Workload.OutputTokens })
	bindOptBool(f, "ignore-eos", "workload.ignore_eos", fs.Bool("ignore-eos", true, "ask the server to generate exactly max_tokens (ignore_eos)"), func(p *Plan) **bool { return &p.Workload.IgnoreEOS })
	f.bindClasses()
}

func (f *Flags) bindClasses() {
	fs := f.fs
	bind(f, "shared-prefix-tokens", "workload.shared_prefix.tokens", fs.Int("shared-prefix-tokens", 0, "open prompts with a shared prefix (system prompt) of this many tokens"), func(p *Plan) *int { return &p.Workload.SharedPrefix.Tokens })
	bind(f, "shared-prefix-fraction", "workload.shared_prefix.fraction", fs.Float64("shared-prefix-fraction", 1, "share of requests that carry the shared prefix"), func(p *Plan) *float64 { return &p.Workload.SharedPrefix.Fraction })
	bind(f, "shared-prefix-groups", "workload.shared_prefix.groups", fs.Int("shared-prefix-groups", 1, "number of distinct shared prefixes requests are spread over"), func(p *Plan) *int { return &p.Workload.SharedPrefix.Groups })
	classes := &classFlag{}
	fs.Var(classes, "class", "request class key=value,... with "+classFlagKeyList(", ")+" (repeatable; replaces the plan's classes), e.g. name=chat,weight=7,input_tokens=128 or name=photo,weight=1,images=1,image_size=1920x1080")
	f.add("class", "workload.classes", func(p *Plan) { p.Workload.Classes = classes.items })
	bind(f, "length-buckets", "workload.length_buckets", fs.IntSlice("length-buckets", DefaultLengthBuckets, "upper bounds of the input-length buckets results are broken down by, in tokens"), func(p *Plan) *[]int { return &p.Workload.LengthBuckets })
	bind(f, "flops-per-s", "load.flops_per_s", fs.Float64("flops-per-s", 0, "open loop paced by compute: FLOP/s ÷ the workload's mean FLOPs per request gives the rate (needs --model-params-b)"), func(p *Plan) *float64 { return &p.Load.FLOPsPerS })
	bind(f, "trace", "load.trace.path", fs.String("trace", "", "replay a request log (Azure LLM trace, BurstGPT, Mooncake, Dynamo or Weka agent trace, CSV or JSONL): its timestamps and lengths"), func(p *Plan) *string { return &p.Load.Trace.Path })
	bind(f, "trace-format", "load.trace.format", fs.String("trace-format", "", "trace format: azure, burstgpt, csv, jsonl, mooncake, dynamo or weka (default: guessed)"), func(p *Plan) *string { return &p.Load.Trace.Format })
	bind(f, "trace-max-gap", "load.trace.max_gap", fs.Duration("trace-max-gap", 0, "cap every gap between a trace's arrivals at this, as replayed (0: keep them)"), func(p *Plan) *time.Duration { return &p.Load.Trace.MaxGap })
	bind(f, "trace-block-tokens", "load.trace.block_tokens", fs.Int("trace-block-tokens", 0, "tokens per Mooncake hash id (default 512; a Dynamo or Weka trace records its own)"), func(p *Plan) *int { return &p.Load.Trace.BlockTokens })
	bind(f, "trace-speed", "load.trace.speed", fs.Float64("trace-speed", 1, "replay speed: 2 sends the trace twice as fast"), func(p *Plan) *float64 { return &p.Load.Trace.Speed })
	bind(f, "trace-loop", "load.trace.loop", fs.Bool("trace-loop", false, "replay the trace again when it runs out (stop with --duration)"), func(p *Plan) *bool { return &p.Load.Trace.Loop })
	bind(f, "salt", "workload.salt", fs.String("salt", "", "prompt salt: run (a new one each run, the default), off (the seed's prompts exactly) or a recorded run's salt to replay its prompts"), func(p *Plan) *string { return &p.Workload.Salt })
	bind(f, "language", "workload.language", fs.String("language", "", "language of synthetic prompts: en (default) or zh"), func(p *Plan) *string { return &p.Workload.Language })
	bind(f, "tokenizer", "workload.tokenizer", fs.String("tokenizer", "", "tokenizer for prompt lengths: cl100k_base (default), o200k_base, or a tokenizer.json or tokenizer.model path"), func(p *Plan) *string { return &p.Workload.Tokenizer })
	bind(f, "dataset", "workload.dataset.path", fs.String("dataset", "", "file of prompts (ShareGPT JSON, OpenAI chat JSONL, prompt JSONL or CSV) for the default class"), func(p *Plan) *string { return &p.Workload.Dataset.Path })
	bind(f, "dataset-format", "workload.dataset.format", fs.String("dataset-format", "", "dataset format: sharegpt, openai-jsonl, jsonl or csv (default: guessed)"), func(p *Plan) *string { return &p.Workload.Dataset.Format })
	bind(f, "image-count", "workload.images.count", fs.Int("image-count", 0, "synthetic images sent with every chat or messages prompt (0: none); see --image-size and --image-format"), func(p *Plan) *int { return &p.Workload.Images.Count })
	bind(f, "image-size", "workload.images.size", fs.String("image-size", "", "size of each synthetic image, WIDTHxHEIGHT in pixels, e.g. 1920x1080"), func(p *Plan) *string { return &p.Workload.Images.Size })
	bind(f, "image-format", "workload.images.format", fs.String("image-format", "", "format of the synthetic images: jpeg (default) or png"), func(p *Plan) *string { return &p.Workload.Images.Format })
	bind(f, "documents", "workload.documents.count", fs.Int("documents", 0, "documents sent with every rerank or score request, scored against the prompt (0: none); see --document-tokens"), func(p *Plan) *int { return &p.Workload.Documents.Count })
	bind(f, "document-tokens", "workload.documents.tokens", fs.String("document-tokens", "", "each document's length in tokens, e.g. 256 or uniform(64,512)"), func(p *Plan) *string { return &p.Workload.Documents.Tokens })
	bind(f, "audio-seconds", "workload.audio.seconds", fs.String("audio-seconds", "", "length of the synthetic WAV each transcription request uploads, in whole seconds, e.g. 30 or uniform(5,60)"), func(p *Plan) *string { return &p.Workload.Audio.Seconds })
	bind(f, "dataset-sample", "workload.dataset.sample", fs.Int("dataset-sample", 0, "keep this many dataset entries, preserving the length distribution (0: all)"), func(p *Plan) *int { return &p.Workload.Dataset.Sample })
	bind(f, "dataset-min-input-tokens", "workload.dataset.min_input_tokens", fs.Int("dataset-min-input-tokens", 0, "drop dataset entries with shorter prompts"), func(p *Plan) *int { return &p.Workload.Dataset.MinInputTokens })
	bind(f, "dataset-max-input-tokens", "workload.dataset.max_input_tokens", fs.Int("dataset-max-input-tokens", 0, "drop dataset entries with longer prompts"), func(p *Plan) *int { return &p.Workload.Dataset.MaxInputTokens })
	bind(f, "bad-input-fraction", "workload.bad_input.fraction", fs.Float64("bad-input-fraction", 0, "share of requests that are deliberately bad input (empty, too long, odd Unicode, max_tokens 0 or huge)"), func(p *Plan) *float64 { return &p.Workload.BadInput.Fraction })
	bind(f, "max-context", "workload.bad_input.max_context", fs.Int("max-context", 0, "the model's context window in tokens, which too-long bad inputs exceed"), func(p *Plan) *int { return &p.Workload.BadInput.MaxContext })
}

// bindThresholds adds --threshold: each one is appended to the plan's
// thresholds rather than replacing them, so CI can tighten a plan's gate.
func (f *Flags) bindThresholds() {
	bind(f, "allow-invalid", "allow_invalid", f.fs.Bool("allow-invalid", false, "let the thresholds pass a run that is NOT VALID (by default such a run exits 97 whatever its thresholds say)"), func(p *Plan) *bool { return &p.AllowInvalid })
	exprs := f.fs.StringArray("threshold", nil, "pass/fail check over a summary figure, e.g. 'ttft_ms.p99 < 2000' (repeatable; adds to the plan's thresholds)")
	f.add("threshold", "thresholds", func(p *Plan) {
		for _, e := range *exprs {
			p.setOrigin(fmt.Sprintf("thresholds[%d]", len(p.Thresholds)), "--threshold")
			p.Thresholds = append(p.Thresholds, e)
		}
	})
}

// bindObserve adds the telemetry flags and --env.
func (f *Flags) bindObserve() {
	fs := f.fs
	bind(f, "scrape", "observe.scrape", fs.String("scrape", "", "comma-separated Prometheus endpoints to sample during the run (default: the target's host + /metrics; off: none)"), func(p *Plan) *string { return &p.Observe.Scrape })
	bind(f, "server-kind", "observe.server", fs.String("server-kind", "auto", "metric names to read: auto, vllm, sglang, tgi, triton, llamacpp, dcgm or node"), func(p *Plan) *string { return &p.Observe.Server })
	bind(f, "scrape-interval", "observe.interval", fs.Duration("scrape-interval", time.Second, "time between telemetry samples"), func(p *Plan) *time.Duration { return &p.Observe.Interval })
	bind(f, "metrics", "observe.metrics", fs.String("metrics", "", "comma-separated extra metric names to record from each scrape"), func(p *Plan) *string { return &p.Observe.Metrics })
	bindOptBool(f, "gpu", "observe.gpu", fs.Bool("gpu", true, "sample local GPUs through NVML or nvidia-smi"), func(p *Plan) **bool { return &p.Observe.GPU })
	bind(f, "otlp-listen", "observe.otlp_listen", fs.String("otlp-listen", "", "receive the server's OTLP trace spans (gRPC and HTTP) on this address, e.g. :4317, and join them to the records"), func(p *Plan) *string { return &p.Observe.OTLPListen })
	bind(f, "otlp-wait", "observe.otlp_wait", fs.Duration("otlp-wait", DefaultOTLPWait, "with --otlp-listen: how long to wait for the last spans after the last request"), func(p *Plan) *time.Duration { return &p.Observe.OTLPWait })
	notes := &pairs{kind: "note"}
	fs.Var(notes, "note-at", "annotation OFFSET=text written to events.jsonl at that run-clock offset, e.g. 30s=cache flushed (repeatable)")
	f.add("note-at", "observe.notes", func(p *Plan) {
		if p.Observe.Notes == nil {
			p.Observe.Notes = make(map[string]string)
		}
		for _, it := range notes.items {
			p.Observe.Notes[it.name] = it.value
			p.setOrigin("observe.notes."+it.name, "--note-at")
		}
	})
	env := &pairs{kind: "env field"}
	fs.Var(env, "env", "declare an environment field key=value for env.json, e.g. framework=vllm-0.6.3 (repeatable)")
	f.add("env", "env", func(p *Plan) {
		if p.Env == nil {
			p.Env = make(map[string]string)
		}
		for _, it := range env.items {
			p.Env[it.name] = it.value
			p.setOrigin("env."+it.name, "--env")
		}
	})
}

// add records a binding.
func (f *Flags) add(flag, path string, apply func(p *Plan)) {
	f.bindings = append(f.bindings, binding{flag: flag, path: path, apply: apply})
}

// bind ties a flag's value to a plan field of the same type.
func bind[T any](f *Flags, flag, path string, value *T, field func(p *Plan) *T) {
	f.add(flag, path, func(p *Plan) { *field(p) = *value })
}

// bindOptBool ties a bool flag to a *bool field (nil means default).
func bindOptBool(f *Flags, flag, path string, value *bool, field func(p *Plan) **bool) {
	f.add(flag, path, func(p *Plan) {
		v := *value
		*field(p) = &v
	})
}

// Apply overlays onto p the flags the user gave on the command line, and
// only those, so a flag overrides the plan file and an absent flag leaves
// the file's value (or the default) alone. --header and --body add to or
// replace single entries of the file's maps rather than replacing them.
func (f *Flags) Apply(p *Plan) {
	for _, b := range f.bindings {
		if !f.fs.Changed(b.flag) {
			continue
		}
		b.apply(p)
		if b.flag != "header" && b.flag != "body" && b.flag != "threshold" && b.flag != "env" && b.flag != "note-at" {
			p.setOrigin(b.path, "--"+b.flag)
		}
	}
}

// pair is one name=value from a repeatable flag.
type pair struct{ name, value string }

// pairs is a pflag.Value collecting name=value arguments, so that a
// malformed one is reported by flag parsing, naming the flag.
type pairs struct {
	kind  string
	items []pair
}

// String shows the collected pairs in errors; "" when there are none, so
// --help shows no "(default [])".
func (ps *pairs) String() string {
	if len(ps.items) == 0 {
		return ""
	}
	s := make([]string, len(ps.items))
	for i, p := range ps.items {
		s[i] = p.name + "=" + p.value
	}
	return "[" + strings.Join(s, ",") + "]"
}

// Set adds one name=value.
func (ps *pairs) Set(s string) error {
	name, value, ok := strings.Cut(s, "=")
	name = strings.TrimSpace(name)
	if !ok || name == "" {
		return fmt.Errorf("want %s name=value", ps.kind)
	}
	ps.items = append(ps.items, pair{name, value})
	return nil
}

// Type names the value in --help.
func (ps *pairs) Type() string { return "name=value" }

// applyHeaders sets each header, replacing one of the same name in any
// letter case (HTTP header names are case-insensitive).
func (ps *pairs) applyHeaders(p *Plan) {
	if p.Target.Headers == nil {
		p.Target.Headers = make(map[string]string)
	}
	for _, it := range ps.items {
		for k := range p.Target.Headers {
			if strings.EqualFold(k, it.name) {
				delete(p.Target.Headers, k)
			}
		}
		p.Target.Headers[it.name] = it.value
		p.setOrigin("target.headers."+it.name, "--header")
	}
}

// applyBody sets each body field, its value parsed as JSON when it is
// valid JSON (numbers stay exact as json.Number) and taken as a string
// otherwise: --body temperature=0.7 is a number, --body user=alice a string.
func (ps *pairs) applyBody(p *Plan) {
	if p.Target.Body == nil {
		p.Target.Body = make(map[string]any)
	}
	for _, it := range ps.items {
		p.Target.Body[it.name] = jsonOrString(it.value)
		p.setOrigin("target.body."+it.name, "--body")
	}
}

// jsonOrString parses s as one JSON value, or returns s itself.
func jsonOrString(s string) any {
	if !json.Valid([]byte(s)) {
		return s
	}
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return s
	}
	return v
}
