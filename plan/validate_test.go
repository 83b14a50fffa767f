package plan

import (
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// closedPlan is a minimal valid closed-loop plan.
func closedPlan() *Plan {
	return &Plan{Target: Target{URL: "http://127.0.0.1:8000/v1"}, Load: LoadOptions{Concurrency: 2}}
}

// openPlan is a minimal valid open-loop plan.
func openPlan() *Plan {
	return &Plan{Target: Target{URL: "https://127.0.0.1:8443/v1"}, Load: LoadOptions{Rate: 5}}
}

func TestValidate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		plan   func() *Plan
		change func(p *Plan)
		want   string // "" means valid
	}{
		// The minimal closed-loop plan is valid.
		{"closed ok", closedPlan, func(*Plan) {}, ""},
		// The minimal open-loop plan is valid.
		{"open ok", openPlan, func(*Plan) {}, ""},
		// The URL is required.
		{"no url", closedPlan, func(p *Plan) { p.Target.URL = "" }, "target.url: required"},
		{"replica not a URL", closedPlan, func(p *Plan) { p.Target.Replicas = []string{"127.0.0.1:8001/v1"} }, "target.replicas[0]: \"127.0.0.1:8001/v1\" is not an http:// or https:// URL"},
		{"replica twice", closedPlan, func(p *Plan) { p.Target.Replicas = []string{"http://127.0.0.1:8001/v1", "http://127.0.0.1:8001/v1"} }, "target.replicas[1]: http://127.0.0.1:8001/v1 is listed twice"},
		{"replica is the url", closedPlan, func(p *Plan) { p.Target.Replicas = []string{"http://127.0.0.1:8000/v1"} }, "target.replicas[0]: http://127.0.0.1:8000/v1 is listed twice"},
		{"replica of another scheme", closedPlan, func(p *Plan) { p.Target.Replicas = []string{"https://127.0.0.1:8001/v1"} }, "target.replicas[0]: https://127.0.0.1:8001/v1: https://, where target.url is http://"},
		{"replica with a query", closedPlan, func(p *Plan) { p.Target.Replicas = []string{"http://127.0.0.1:8001/v1?key=s3cret"} }, "target.replicas[0]: http://127.0.0.1:8001/v1?…: a base URL must not have a query"},
		{"replicas over triton-grpc", closedPlan, func(p *Plan) {
			p.Target.API, p.Target.Replicas = "triton-grpc", []string{"http://127.0.0.1:8001"}
		}, "target.replicas: not with api triton-grpc"},
		// Only http and https.
		{"ftp url", closedPlan, func(p *Plan) { p.Target.URL = "ftp://h/v1" }, `target.url: "ftp://h/v1" is not an http:// or https:// URL`},
		// A URL needs a host.
		{"no host", closedPlan, func(p *Plan) { p.Target.URL = "http:///v1" }, "is not an http:// or https:// URL with a host"},
		// A bad URL's password is not echoed in the error.
		{"url secret", closedPlan, func(p *Plan) { p.Target.URL = "ftp://u:hunter2@h" }, `"ftp://u:REDACTED@h"`},
		// Only the two APIs.
		{"bad api", closedPlan, func(p *Plan) { p.Target.API = "classify" }, `target.api: "classify" is not an API: want chat, completions, embeddings, images, responses, messages, rerank, score, transcriptions, realtime, tgi, ollama, ollama-generate, triton, torchserve, pooling, triton-infer, triton-grpc or http`},
		// Rerank and score send documents: with them the plan is valid.
		{"rerank ok", closedPlan, func(p *Plan) {
			p.Target.API, p.Workload.Documents = "rerank", Documents{Count: 16, Tokens: "uniform(64,512)"}
		}, ""},
		// Without documents there is nothing to rank.
		{"rerank no documents", closedPlan, func(p *Plan) { p.Target.API = "score" }, "workload.documents.count: required by the score API"},
		// Another API cannot send them.
		{"documents with chat", closedPlan, func(p *Plan) { p.Workload.Documents = Documents{Count: 2, Tokens: "8"} },
			"workload.documents: documents are sent by the rerank and score APIs only, not by chat"},
		// A count needs a length, and a length a count.
		{"documents no tokens", closedPlan, func(p *Plan) { p.Target.API, p.Workload.Documents = "rerank", Documents{Count: 2} },
			"workload.documents: tokens: set each document's length"},
		{"documents no count", closedPlan, func(p *Plan) { p.Workload.Documents = Documents{Tokens: "8"} }, "workload.documents: count: set it"},
		// The bound on the count.
		{"documents too many", closedPlan, func(p *Plan) { p.Target.API, p.Workload.Documents = "rerank", Documents{Count: 5000, Tokens: "8"} },
			"count 5000: want 0 to 1000"},
		// pooling is a native API: its URL is the server's root.
		{"pooling v1", closedPlan, func(p *Plan) { p.Target.API = "pooling" }, "target.url: base URL"},
		// Transcriptions upload audio: with it the plan is valid.
		{"audio ok", closedPlan, func(p *Plan) { p.Target.API, p.Workload.Audio = "transcriptions", Audio{Seconds: "uniform(5,30)"} }, ""},
		// Without audio there is nothing to transcribe.
		{"transcriptions no audio", closedPlan, func(p *Plan) { p.Target.API = "transcriptions" }, "workload.audio.seconds: required by the transcriptions API"},
		// Another API cannot upload it.
		{"audio with chat", closedPlan, func(p *Plan) { p.Workload.Audio = Audio{Seconds: "10"} }, "workload.audio: audio is uploaded by the transcriptions API only, not by chat"},
		// Whole seconds from 1 s to an hour.
		{"audio too long", closedPlan, func(p *Plan) { p.Target.API, p.Workload.Audio = "transcriptions", Audio{Seconds: "7200"} }, "want lengths of 1 to 3600 seconds"},
		{"audio bad dist", closedPlan, func(p *Plan) { p.Target.API, p.Workload.Audio = "transcriptions", Audio{Seconds: "forever"} }, "workload.audio.seconds: length"},
		// A realtime session always streams.
		{"realtime ok", closedPlan, func(p *Plan) { p.Target.API = "realtime" }, ""},
		{"realtime not streamed", closedPlan, func(p *Plan) { p.Target.API, p.Target.Stream = "realtime", new(false) }, "target.stream: is false, but the realtime API"},
		// Synthetic images go in chat messages.
		{"images ok", closedPlan, func(p *Plan) { p.Workload.Images = Images{Count: 2, Size: "1920x1080", Format: "png"} }, ""},
		{"images bad size", closedPlan, func(p *Plan) { p.Workload.Images = Images{Count: 1, Size: "1080p"} }, `workload.images: size: image size "1080p": want WIDTHxHEIGHT`},
		{"images no count", closedPlan, func(p *Plan) { p.Workload.Images = Images{Size: "64x64"} }, "workload.images: count: set it"},
		{"images bad format", closedPlan, func(p *Plan) { p.Workload.Images = Images{Count: 1, Size: "64x64", Format: "webp"} }, `images.format "webp": want jpeg or png`},
		// Another API would have to drop them.
		{"images completions", closedPlan, func(p *Plan) {
			p.Target.API = "completions"
			p.Workload.Images = Images{Count: 1, Size: "64x64"}
		}, "workload.images: images are sent in a chat or messages API message or in an http template's {{image}}: the completions API cannot send them"},
		// The Messages API sends them as Anthropic's image blocks.
		{"images messages", closedPlan, func(p *Plan) {
			p.Target.API = "messages"
			p.Workload.Images = Images{Count: 1, Size: "64x64"}
		}, ""},
		// The http API sends them through its body template, which must
		// have a place for them.
		{"images http template", closedPlan, func(p *Plan) {
			p.Target.API, p.Target.URL = "http", "http://127.0.0.1:9000/classify"
			p.Target.HTTP = HTTPAPI{Body: `{"image":"{{image}}"}`, Response: "json"}
			p.Workload.Images = Images{Count: 1, Size: "64x64"}
		}, ""},
		{"images http no place", closedPlan, func(p *Plan) {
			p.Target.API, p.Target.URL = "http", "http://127.0.0.1:9000/classify"
			p.Target.HTTP = HTTPAPI{Body: `{"q":"{{prompt}}"}`, Response: "json"}
			p.Workload.Images = Images{Count: 1, Size: "64x64"}
		}, "workload.images: the http API sends images only through its body template: target.http.body has no {{image}}"},
		// A class's images follow the class's API.
		{"class images on images api", closedPlan, func(p *Plan) {
			p.Workload.Classes = []Class{{Name: "gen", Weight: 1, API: "images", Images: Images{Count: 1, Size: "64x64"}}}
		}, "workload.classes[0].images: images are sent in a chat or messages API message or in an http template's {{image}}: the images API cannot send them"},
		// The flat images do nothing beside classes.
		{"flat images with classes", closedPlan, func(p *Plan) {
			p.Workload.Classes = []Class{{Name: "a", Weight: 1}}
			p.Workload.Images = Images{Count: 1, Size: "64x64"}
		}, "workload.images: has no effect with workload.classes"},
		// Only English and Chinese prose exist.
		{"bad language", closedPlan, func(p *Plan) { p.Workload.Language = "fr" }, `workload.language: language "fr" is not supported; want en or zh`},
		// A fixed salt is one plain word: spaces and quotes are refused with the spellings.
		{"bad salt", closedPlan, func(p *Plan) { p.Workload.Salt = "two words" }, `workload.salt: "two words": want run (a new salt each run, the default), off`},
		// A recorded run's salt replays it.
		{"fixed salt", closedPlan, func(p *Plan) { p.Workload.Salt = "3f9a0c1e77b2" }, ""},
		// No salt at all is an exact replay of the seed's prompts.
		{"salt off", closedPlan, func(p *Plan) { p.Workload.Salt = SaltOff }, ""},
		// A class's language is checked too.
		{"bad class language", closedPlan, func(p *Plan) { p.Workload.Classes = []Class{{Name: "c", Weight: 1, Language: "EN"}} }, `workload.classes[0].language: language "EN" is not supported`},
		// At a rate each arrival starts a conversation whose turns wait
		// for the last reply (AIPerf's user-centric rate).
		{"turns at a rate", openPlan, func(p *Plan) { p.Workload.Classes = []Class{{Name: "c", Weight: 1, Turns: 3}} }, ""},
		// A trace's arrivals are single requests: turn k would not wait for turn k-1.
		{"turns trace", openPlan, func(p *Plan) {
			p.Load.Rate, p.Load.Trace.Path = 0, "trace.jsonl"
			p.Workload.Classes = []Class{{Name: "c", Weight: 1, Turns: 3}}
		}, "workload.classes[0].turns: conversations need load.concurrency or load.rate"},
		// So are compute pacing's (the check once looked only at rate and trace).
		{"turns flops pacing", closedPlan, func(p *Plan) {
			p.Load.Concurrency, p.Load.FLOPsPerS, p.Compute.ParamsB = 0, 1e15, 8
			p.Workload.Classes = []Class{{Name: "c", Weight: 1, Turns: 3}}
		}, "workload.classes[0].turns: conversations need load.concurrency or load.rate"},
		// The history is the replies or synthetic text, nothing else.
		{"bad history", closedPlan, func(p *Plan) { p.Workload.Classes = []Class{{Name: "c", Weight: 1, Turns: 3, History: "real"}} }, `workload.classes[0].history: "real": want replies or synthetic`},
		{"synthetic history", closedPlan, func(p *Plan) { p.Workload.Classes = []Class{{Name: "c", Weight: 1, Turns: 3, History: "synthetic"}} }, ""},
		// Conversations need chat messages to carry the history.
		{"turns embeddings", closedPlan, func(p *Plan) { p.Workload.Classes = []Class{{Name: "c", Weight: 1, Turns: 3, API: "embeddings"}} }, "workload.classes[0].turns: conversations need the chat, messages or responses API, not embeddings"},
		// Anthropic's Messages API is stateless like chat: the history
		// goes in its messages.
		{"turns messages", closedPlan, func(p *Plan) { p.Workload.Classes = []Class{{Name: "c", Weight: 1, Turns: 3, API: "messages"}} }, ""},
		// The Responses API carries them too (previous_response_id).
		{"turns responses", closedPlan, func(p *Plan) { p.Workload.Classes = []Class{{Name: "c", Weight: 1, Turns: 3, API: "responses"}} }, ""},
		// Turns are bounded.
		{"turns negative", closedPlan, func(p *Plan) { p.Workload.Classes = []Class{{Name: "c", Weight: 1, Turns: -1}} }, "workload.classes[0].turns: -1: want 0 to 1000"},
		// A class's timeout override may be left out but not negative.
		{"class timeout negative", closedPlan, func(p *Plan) {
			p.Workload.Classes = []Class{{Name: "c", Weight: 1, Timeouts: Timeouts{TTFT: -time.Second}}}
		}, "workload.classes[0].timeouts.ttft: -1s: want a positive duration"},
		// Two key sources conflict.
		{"two keys", closedPlan, func(p *Plan) { p.Target.APIKeyEnv, p.Target.APIKeyFile = "K", "k.txt" }, "set api_key_env or api_key_file, not both"},
		// A CA file is pointless when verification is off.
		{"ca and insecure", closedPlan, func(p *Plan) { p.Target.CAFile, p.Target.Insecure = "ca.pem", true }, "target.ca_file: has no effect with insecure"},
		{"h2 over http", closedPlan, func(p *Plan) { p.Target.HTTP2 = "h2" }, "target.http2: h2 is negotiated over TLS"},
		{"h2c over https", closedPlan, func(p *Plan) { p.Target.URL, p.Target.HTTP2 = "https://127.0.0.1:8000/v1", "h2c" }, "target.http2: h2c is cleartext"},
		{"unknown http2", closedPlan, func(p *Plan) { p.Target.HTTP2 = "h3" }, `target.http2: "h3": want h2`},
		// Header names must be tokens.
		{"bad header", closedPlan, func(p *Plan) { p.Target.Headers = map[string]string{"X Bad": "1"} }, `target.headers.X Bad: "X Bad" is not a valid HTTP header name`},
		// Header values cannot smuggle a second header.
		{"header crlf", closedPlan, func(p *Plan) { p.Target.Headers = map[string]string{"X-A": "1\r\nX-B: 2"} }, "header values cannot contain line breaks"},
		// The body must marshal to JSON.
		{"bad body", closedPlan, func(p *Plan) { p.Target.Body = map[string]any{"x": math.NaN()} }, "target.body: cannot be sent as JSON"},
		// Negative timeouts make no sense.
		{"negative timeout", closedPlan, func(p *Plan) { p.Target.Timeouts.TTFT = -time.Second }, "target.timeouts.ttft: -1s: want a positive duration"},
		// Neither load model.
		{"no load", closedPlan, func(p *Plan) { p.Load.Concurrency = 0 }, "load: set load.concurrency (closed loop, --concurrency N), load.rate"},
		// Both load models.
		{"both loads", closedPlan, func(p *Plan) { p.Load.Rate = 3 }, "load.rate: set load.concurrency (closed loop: N users) or load.rate (open loop: requests/s), not both"},
		// Negative users.
		{"negative users", closedPlan, func(p *Plan) { p.Load.Concurrency = -1 }, "load.concurrency: -1: want a positive number of users"},
		// An extra three zeros.
		{"huge users", closedPlan, func(p *Plan) { p.Load.Concurrency = 32_000_000 }, "is there an extra zero?"},
		// NaN rate.
		{"nan rate", openPlan, func(p *Plan) { p.Load.Rate = math.NaN() }, "load.rate: NaN: want a positive number"},
		// A rate no client host can send, accepted before (1e308 requests/s).
		{"huge rate", openPlan, func(p *Plan) { p.Load.Rate = 1e308 }, "load.rate: 1e+308 requests/s is more than 1000000; is there an extra zero?"},
		// The cap itself is allowed.
		{"rate at the cap", openPlan, func(p *Plan) { p.Load.Rate = 1e6 }, ""},
		// Arrival needs open loop.
		{"arrival closed", closedPlan, func(p *Plan) { p.Load.Arrival = "poisson" }, "load.arrival: only applies with load.rate"},
		// Unknown arrival.
		{"bad arrival", openPlan, func(p *Plan) { p.Load.Arrival = "uniform" }, `load.arrival: "uniform": want one of constant, poisson, gamma`},
		// Burstiness needs gamma.
		{"burstiness poisson", openPlan, func(p *Plan) { p.Load.Burstiness = 0.5 }, "load.burstiness: only applies with arrival: gamma"},
		// Gamma burstiness must be positive.
		{"burstiness negative", openPlan, func(p *Plan) { p.Load.Arrival, p.Load.Burstiness = "gamma", -1 }, "load.burstiness: -1: want a number above 0"},
		// Gamma gets burstiness 1 by default.
		{"gamma default", openPlan, func(p *Plan) { p.Load.Arrival = "gamma" }, ""},
		// max_in_flight needs open loop.
		{"cap closed", closedPlan, func(p *Plan) { p.Load.MaxInFlight = 8 }, "load.max_in_flight: only applies with load.rate"},
		// late_after needs open loop.
		{"late closed", closedPlan, func(p *Plan) { p.Load.LateAfter = time.Millisecond }, "load.late_after: only applies with load.rate"},
		// think_time needs closed loop.
		{"think open", openPlan, func(p *Plan) { p.Load.ThinkTime = "1s" }, "load.think_time: only applies with load.concurrency"},
		// ... or conversations at a rate: the pause between a reply and the next turn.
		{"think conversations at a rate", openPlan, func(p *Plan) {
			p.Load.ThinkTime = "1s"
			p.Workload.Classes = []Class{{Name: "c", Weight: 1, Turns: 3}}
		}, ""},
		// think_time is parsed by schedule's parser.
		{"bad think", closedPlan, func(p *Plan) { p.Load.ThinkTime = "uniform(5s,1s)" }, "low 5s is above high 1s"},
		// Warm-up must leave something to measure.
		{"warmup too long", closedPlan, func(p *Plan) { p.Load.Duration, p.Load.Warmup = time.Minute, time.Minute }, "load.warmup: 1m0s leaves nothing to measure"},
		// A negative spawn rate would start no user ever.
		{"negative spawn rate", closedPlan, func(p *Plan) { p.Load.SpawnRate = -2 }, "load.spawn_rate: -2: want users per second above 0"},
		// A request-count run may have a time-based warm-up.
		{"warmup with requests", closedPlan, func(p *Plan) { p.Load.Requests, p.Load.Warmup = 100, time.Hour }, ""},
		// Negative request counts.
		{"negative requests", closedPlan, func(p *Plan) { p.Load.Requests = -5 }, "load.requests: -5"},
		// Token specs go through workload's parser.
		{"bad input tokens", closedPlan, func(p *Plan) { p.Workload.InputTokens = "uniform(9,1)" }, "workload.input_tokens: length \"uniform(9,1)\": uniform low 9 is above high 1"},
		// Zero-token outputs are refused.
		{"zero output", closedPlan, func(p *Plan) { p.Workload.OutputTokens = "uniform(0,4)" }, "workload.output_tokens: uniform(0,4) can be 0; want at least 1 token"},
		// Classes with the flat lengths' defaults are valid.
		{"classes ok", closedPlan, func(p *Plan) { p.Workload.Classes = []Class{{Name: "a", Weight: 1}, {Name: "b", Weight: 0.5}} }, ""},
		// A class needs a weight: weights summing to zero are an error.
		{"zero weight", closedPlan, func(p *Plan) { p.Workload.Classes = []Class{{Name: "a"}} }, "workload.classes[0].weight: 0: want a positive number"},
		// A class needs a name.
		{"no class name", closedPlan, func(p *Plan) { p.Workload.Classes = []Class{{Weight: 1}} }, `workload.classes[0].name: "": want 1-40`},
		// Two classes cannot share a name.
		{"dup class", closedPlan, func(p *Plan) { p.Workload.Classes = []Class{{Name: "a", Weight: 1}, {Name: "a", Weight: 1}} }, "workload.classes[1].name: a is already the name of class 0"},
		// bad_input is the bad-input class's name.
		{"reserved class", closedPlan, func(p *Plan) { p.Workload.Classes = []Class{{Name: "bad_input", Weight: 1}} }, "reserved"},
		// A class's lengths go through workload's parser.
		{"class length", closedPlan, func(p *Plan) { p.Workload.Classes = []Class{{Name: "a", Weight: 1, InputTokens: "normal(5)"}} }, "workload.classes[0].input_tokens: length \"normal(5)\""},
		// A class's API is checked.
		{"class api", closedPlan, func(p *Plan) { p.Workload.Classes = []Class{{Name: "a", Weight: 1, API: "grpc"}} }, "workload.classes[0].api"},
		// Flat lengths next to classes would do nothing.
		{"flat and classes", closedPlan, func(p *Plan) {
			p.Workload.InputTokens, p.Workload.Classes = "9", []Class{{Name: "a", Weight: 1}}
		}, "workload.input_tokens: has no effect with workload.classes"},
		// A prefix share above 1 is refused.
		{"prefix share", closedPlan, func(p *Plan) { p.Workload.SharedPrefix = SharedPrefix{Tokens: 5, Fraction: 1.5} }, "workload.shared_prefix: shared prefix fraction 1.5"},
		// A prefix without its length is incomplete.
		{"prefix no tokens", closedPlan, func(p *Plan) { p.Workload.SharedPrefix.Groups = 3 }, "workload.shared_prefix.tokens: set the prefix length"},
		// A trace is its own schedule: no rate beside it.
		{"trace and rate", openPlan, func(p *Plan) { p.Load.Trace.Path = "t.csv" }, "load.trace.path: a trace is its own arrival schedule"},
		// An unknown trace format lists the known ones.
		{"trace format", closedPlan, func(p *Plan) {
			p.Load.Concurrency, p.Load.Trace = 0, Trace{Path: "t.csv", Format: "pcap", Speed: 1}
		}, "load.trace.format: \"pcap\": want one of"},
		// A negative gap cap.
		{"trace max gap", closedPlan, func(p *Plan) {
			p.Load.Concurrency, p.Load.Trace = 0, Trace{Path: "t.jsonl", Speed: 1, MaxGap: -time.Second}
		}, "load.trace.max_gap: -1s: want a positive duration"},
		// A block size out of range.
		{"trace block tokens", closedPlan, func(p *Plan) {
			p.Load.Concurrency, p.Load.Trace = 0, Trace{Path: "t.jsonl", Speed: 1, BlockTokens: 1 << 20}
		}, "load.trace.block_tokens: 1048576: want 1 to 65536"},
		// Block tokens on a format without hash ids would do nothing.
		{"trace block tokens, not mooncake", closedPlan, func(p *Plan) {
			p.Load.Concurrency, p.Load.Trace = 0, Trace{Path: "t.csv", Format: "csv", Speed: 1, BlockTokens: 256}
		}, "load.trace.block_tokens: only applies to a mooncake, dynamo or weka trace"},
		// A Dynamo trace's sessions replay once: looping them is refused.
		{"trace loop, dynamo", closedPlan, func(p *Plan) {
			p.Load.Concurrency, p.Load.Trace = 0, Trace{Path: "t.jsonl", Format: "dynamo", Speed: 1, Loop: true}
		}, "load.trace.loop: an agent trace (dynamo) replays its sessions once"},
		// The trace decides lengths: classes beside it would do nothing.
		{"trace and classes", closedPlan, func(p *Plan) {
			p.Load.Concurrency, p.Load.Trace = 0, Trace{Path: "t.csv", Speed: 1}
			p.Workload.Classes = []Class{{Name: "a", Weight: 1}}
		}, "load.trace.path: the trace decides request lengths"},
		// Compute pacing needs the model's size.
		{"flops without model", closedPlan, func(p *Plan) { p.Load.Concurrency, p.Load.FLOPsPerS = 0, 1e15 }, "load.flops_per_s: needs the model's size"},
		// Compute pacing is its own schedule: no rate beside it.
		{"flops and rate", openPlan, func(p *Plan) { p.Load.FLOPsPerS, p.Compute.ParamsB = 1e15, 8 }, "load.flops_per_s: paces the arrivals itself"},
		// A dataset needs its file.
		{"dataset no path", closedPlan, func(p *Plan) { p.Workload.Dataset.Sample = 10 }, "workload.dataset.path: set the dataset file"},
		// An unknown dataset format lists the known ones.
		{"dataset format", closedPlan, func(p *Plan) { p.Workload.Dataset = Dataset{Path: "x", Format: "parquet"} }, "workload.dataset.format: \"parquet\": want one of"},
		// An empty length range is refused.
		{"dataset range", closedPlan, func(p *Plan) { p.Workload.Dataset = Dataset{Path: "x", MinInputTokens: 9, MaxInputTokens: 3} }, "workload.dataset.min_input_tokens: 9 is above"},
		// A class's dataset is checked too.
		{"class dataset", closedPlan, func(p *Plan) {
			p.Workload.Classes = []Class{{Name: "a", Weight: 1, Dataset: Dataset{Sample: -1, Path: "x"}}}
		}, "workload.classes[0].dataset: sample"},
		// Buckets must increase.
		{"buckets order", closedPlan, func(p *Plan) { p.Workload.LengthBuckets = []int{512, 256} }, "workload.length_buckets: [512 256]: want increasing"},
		// Bad input needs the context window.
		{"bad input no context", closedPlan, func(p *Plan) { p.Workload.BadInput.Fraction = 0.1 }, "workload.bad_input: bad input needs the model's context window"},
		// A context window alone does nothing.
		{"context alone", closedPlan, func(p *Plan) { p.Workload.BadInput.MaxContext = 4096 }, "workload.bad_input.max_context: only applies with"},
		// Names must be safe directory names.
		{"path name", closedPlan, func(p *Plan) { p.Name = "../etc" }, `name: "../etc" cannot name a run directory`},
		// Names cannot be hidden files either.
		{"dot name", closedPlan, func(p *Plan) { p.Name = ".hidden" }, "cannot name a run directory"},
	}
	for _, tt := range tests {
		p := tt.plan()
		tt.change(p)
		checkValidate(t, tt.name, p, tt.want)
	}
}

func TestValidateCollectsAll(t *testing.T) {
	t.Parallel()
	p := &Plan{Name: "a/b", Target: Target{API: "grpc"}, Load: LoadOptions{Concurrency: 1, Rate: 1},
		Workload: Workload{InputTokens: "x"}}
	p.ApplyDefaults()
	var errs Errors
	if err := p.Validate(); !errors.As(err, &errs) {
		t.Fatalf("Validate = %v, want Errors", err)
	}
	// Name, URL, API, both load models and input tokens: five problems,
	// each its own FieldError.
	fields := []string{"name", "target.url", "target.api", "load.rate", "workload.input_tokens"}
	if len(errs) != len(fields) {
		t.Fatalf("got %d problems, want %d:\n%v", len(errs), len(fields), errs)
	}
	for i, f := range fields {
		if errs[i].Field != f {
			t.Errorf("problem %d is about %s, want %s", i, errs[i].Field, f)
		}
	}
}

func TestDefaults(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		plan  *Plan
		check func(p *Plan) bool
	}{
		// No stop condition: a one-minute run.
		{"default duration", closedPlan(), func(p *Plan) bool { return p.Load.Duration == DefaultDuration }},
		// A request count alone adds no duration.
		{"requests only", &Plan{Load: LoadOptions{Requests: 10}}, func(p *Plan) bool { return p.Load.Duration == 0 }},
		// Open loop gets Poisson arrivals and a lateness threshold.
		{"open loop", openPlan(), func(p *Plan) bool {
			return p.Load.Arrival == "poisson" && p.Load.LateAfter == DefaultLateAfter && p.Load.Burstiness == 0
		}},
		// Closed loop gets neither.
		{"closed loop", closedPlan(), func(p *Plan) bool { return p.Load.Arrival == "" && p.Load.LateAfter == 0 }},
		// Bools default to true but an explicit false stays.
		{"explicit false", &Plan{Target: Target{Stream: ptr(false)}}, func(p *Plan) bool {
			return !*p.Target.Stream && *p.Target.IncludeUsage && *p.Workload.IgnoreEOS
		}},
		// Classes get the flat length defaults; the flat fields stay unset.
		{"classes", &Plan{Workload: Workload{Classes: []Class{{Name: "a", Weight: 1}}}}, func(p *Plan) bool {
			c := p.Workload.Classes[0]
			return p.Workload.InputTokens == "" && c.InputTokens == "512" && c.OutputTokens == "128" && c.API == ""
		}},
		// A shared prefix gets its default share and groups.
		{"prefix", &Plan{Workload: Workload{SharedPrefix: SharedPrefix{Tokens: 9}}}, func(p *Plan) bool {
			return p.Workload.SharedPrefix == SharedPrefix{Tokens: 9, Fraction: 1, Groups: 1}
		}},
		// The rest of the documented defaults.
		{"others", closedPlan(), func(p *Plan) bool {
			return p.Name == "run" && p.Target.API == "chat" && p.Target.Timeouts == Timeouts{10 * time.Second, time.Minute, 10 * time.Minute} &&
				p.Load.Grace == 30*time.Second && cmp.Equal(p.Workload, Workload{Seed: 1, Salt: "run", InputTokens: "512", OutputTokens: "128", IgnoreEOS: p.Workload.IgnoreEOS, LengthBuckets: []int{256, 1024, 4096}}) &&
				p.Output.Dir == "runs"
		}},
	}
	for _, tt := range tests {
		tt.plan.ApplyDefaults()
		if !tt.check(tt.plan) {
			t.Errorf("%s: defaults wrong: %+v", tt.name, tt.plan)
		}
	}
}

// checkValidate applies p's defaults and validates it: want "" expects
// no error, any other want an error containing it.
func checkValidate(t *testing.T, name string, p *Plan, want string) {
	t.Helper()
	p.ApplyDefaults()
	err := p.Validate()
	switch {
	case want == "" && err != nil:
		t.Errorf("%s: unexpected error: %v", name, err)
	case want != "" && (err == nil || !strings.Contains(err.Error(), want)):
		t.Errorf("%s: error %v\nwant it to contain %q", name, err, want)
	}
}
