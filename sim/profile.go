package sim

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// Profile describes one simulated deployment: the model as the API shows
// it, the engine limits vLLM exposes as flags, the cost model that turns a
// batch into a step time, and the GPU figures reported under DCGM names.
// docs/sim.md gives every preset's values and where they come from.
type Profile struct {
	// Name identifies the profile (a preset name or the YAML's own).
	Name string `yaml:"name"`
	// Description is one line for listings.
	Description string `yaml:"description"`
	// Model is the served model name: /v1/models lists it and requests
	// naming another model get a 404, as vLLM does.
	Model string `yaml:"model"`
	// MaxModelLen caps prompt + output tokens (vLLM --max-model-len).
	// Longer requests get OpenAI's context_length_exceeded 400.
	MaxModelLen int `yaml:"max_model_len"`
	// MaxNumSeqs caps the running batch (vLLM --max-num-seqs).
	MaxNumSeqs int `yaml:"max_num_seqs"`
	// MaxNumBatchedTokens is the per-step token budget shared by decodes
	// and prefill chunks (vLLM --max-num-batched-tokens).
	MaxNumBatchedTokens int `yaml:"max_num_batched_tokens"`
	// BlockSize is the number of tokens per KV-cache block (vLLM
	// --block-size) and the granularity of prefix caching.
	BlockSize int `yaml:"block_size"`
	// NumGPUBlocks is the KV-cache size in blocks (vLLM logs it as
	// "# GPU blocks"; --num-gpu-blocks-override sets it).
	NumGPUBlocks int `yaml:"num_gpu_blocks"`
	// KVWatermark is the fraction of KV blocks that must stay free after a
	// new request is admitted, room for running sequences to grow (vLLM
	// V0's watermark, default 0.01). Negative means none.
	KVWatermark float64 `yaml:"kv_watermark"`
	// DisableChunkedPrefill selects vLLM V0's default scheduler (vLLM
	// 0.4 without --enable-chunked-prefill): a step either prefills
	// whole prompts of waiting requests, up to max_num_batched_tokens,
	// or decodes every running sequence, never both, and prefills go
	// first, stalling the running batch. Off means V1's chunked prefill,
	// where decodes and prompt chunks share every step.
	DisableChunkedPrefill bool `yaml:"disable_chunked_prefill"`
	// DisablePrefixCaching turns off reuse of cached prompt blocks
	// (vLLM --no-enable-prefix-caching). Caching is on by default.
	DisablePrefixCaching bool `yaml:"disable_prefix_caching"`
	// Cost turns one step's batch into its duration.
	Cost CostModel `yaml:"cost"`
	// OutputLength is how many tokens a request generates when it does not
	// set ignore_eos; max_tokens and min_tokens still bound the draw.
	OutputLength LengthDist `yaml:"output_length"`
	// ReasoningLength, when set (a mean or a kind), makes the model reason
	// before it answers, as vLLM with a reasoning parser streams it: a chat
	// request's first tokens, this many, arrive as delta.reasoning_content,
	// the answer (OutputLength) after them, and usage counts them in
	// completion_tokens_details.reasoning_tokens. max_tokens caps reasoning
	// and answer together, so a short cap ends a reply while it reasons.
	// Completions replies do not reason. Unset: no reasoning.
	ReasoningLength LengthDist `yaml:"reasoning_length"`
	// ReasoningEffort gives a reasoning length per reasoning effort, as a
	// request names it (chat's reasoning_effort, the Responses API's
	// reasoning.effort), so classes of one run can reason for different
	// lengths: {low: {kind: fixed, mean: 100}, high: {mean: 2000}}. A
	// request naming no effort, or one not listed, reasons for
	// ReasoningLength (not at all when that is unset).
	ReasoningEffort map[string]LengthDist `yaml:"reasoning_effort"`
	// HideCachedTokens leaves usage.prompt_tokens_details, and the
	// llama.cpp timings (whose cache_n says the same), out of chat and
	// completions replies, as vLLM does without
	// --enable-prompt-tokens-details: the client then sees no cached
	// tokens per request, only the prefix-cache counters on /metrics.
	HideCachedTokens bool `yaml:"hide_cached_tokens"`
	// QueueLimit is the most requests allowed to wait; one more is
	// rejected with QueueFullStatus. 0 means unlimited, as in vLLM.
	QueueLimit int `yaml:"queue_limit"`
	// QueueFullStatus is the HTTP status of a rejection: 429 (the default,
	// as TGI and rate-limiting gateways send) or 503.
	QueueFullStatus int `yaml:"queue_full_status"`
	// GPU holds the figures behind the DCGM metrics; Count 0 (a CPU
	// deployment) reports none.
	GPU GPU `yaml:"gpu"`
	// Faults are injected into a fraction of requests; Config.Faults, when
	// set, replaces them.
	Faults Faults `yaml:"faults"`
}

// CostModel gives one engine step's duration as
//
//	StepOverhead + prefill tokens × PrefillPerToken
//	             + decoding sequences × DecodePerSeq
//	             + KV tokens read × KVReadPerToken
//
//	             + waiting requests × WaitingPerRequest
//
// where "KV tokens read" is the context length of every sequence in the
// step: attention must stream each one's keys and values from HBM. The
// overhead is the part every step pays regardless of the batch: reading
// the weights once, kernel launches, the scheduler and sampler on the CPU.
type CostModel struct {
	// StepOverhead is paid by every step that runs anything.
	StepOverhead time.Duration `yaml:"step_overhead"`
	// PrefillPerToken is the compute for one prompt token.
	PrefillPerToken time.Duration `yaml:"prefill_per_token"`
	// DecodePerSeq is the extra time one more decoding sequence adds.
	DecodePerSeq time.Duration `yaml:"decode_per_seq"`
	// KVReadPerToken is the time to read one token's KV from memory.
	KVReadPerToken time.Duration `yaml:"kv_read_per_token"`
	// WaitingPerRequest is CPU time each step spends per queued request,
	// for engines whose scheduler walks its whole queue every step. No
	// preset uses it (0): it is there for custom profiles.
	WaitingPerRequest time.Duration `yaml:"waiting_per_request"`
}

// StepTime returns the duration of a step that computes prefillTokens
// prompt tokens, decodes decodeSeqs sequences and reads kvTokens tokens of
// context while waiting requests are queued.
func (c CostModel) StepTime(prefillTokens, decodeSeqs, kvTokens, waiting int) time.Duration {
	return c.StepOverhead +
		time.Duration(prefillTokens)*c.PrefillPerToken +
		time.Duration(decodeSeqs)*c.DecodePerSeq +
		time.Duration(kvTokens)*c.KVReadPerToken +
		time.Duration(waiting)*c.WaitingPerRequest
}

// GPU describes the accelerators behind a profile, for the DCGM-named
// metrics. Memory figures are per GPU except where noted.
type GPU struct {
	// Name is DCGM's modelName label, e.g. "NVIDIA A100-SXM4-80GB".
	Name string `yaml:"name"`
	// Count is the number of GPUs (the tensor-parallel size); 0 means the
	// model runs on CPU and no DCGM metrics are exported.
	Count int `yaml:"count"`
	// MemoryMiB is each GPU's framebuffer.
	MemoryMiB int `yaml:"memory_mib"`
	// WeightsMiB is the whole model's weights, split evenly over Count.
	WeightsMiB int `yaml:"weights_mib"`
	// KVBytesPerToken is the whole model's KV size of one token:
	// 2 (K and V) × layers × KV heads × head dim × bytes per value.
	KVBytesPerToken int `yaml:"kv_bytes_per_token"`
	// ReservedMiB is each GPU's memory beyond weights and KV cache: CUDA
	// context, activation workspace, CUDA graphs.
	ReservedMiB int `yaml:"reserved_mib"`
	// IdleWatts is each GPU's draw with no work.
	IdleWatts float64 `yaml:"idle_watts"`
	// MaxWatts is each GPU's draw when busy all the time (its TDP).
	MaxWatts float64 `yaml:"max_watts"`
}

// FramebufferUsedMiB is each GPU's memory in use once the model is loaded.
// vLLM allocates its whole KV cache at start-up, so this does not move with
// load: that is what DCGM shows on a real vLLM server too.
func (p Profile) FramebufferUsedMiB() int {
	if p.GPU.Count == 0 {
		return 0
	}
	kv := int64(p.NumGPUBlocks) * int64(p.BlockSize) * int64(p.GPU.KVBytesPerToken)
	perGPU := (int64(p.GPU.WeightsMiB)<<20 + kv) / int64(p.GPU.Count)
	return int(perGPU>>20) + p.GPU.ReservedMiB
}

// WithDefaults fills the fields whose zero value stands for a default.
func (p Profile) WithDefaults() Profile {
	if p.QueueFullStatus == 0 {
		p.QueueFullStatus = 429
	}
	if p.KVWatermark == 0 {
		p.KVWatermark = 0.01
	}
	if p.KVWatermark < 0 {
		p.KVWatermark = 0
	}
	if p.OutputLength.Kind == "" {
		p.OutputLength.Kind = "lognormal"
	}
	return p
}

// Validate reports the first field that makes p unusable, naming it.
func (p Profile) Validate() error {
	if err := p.validateEngine(); err != nil {
		return fmt.Errorf("profile %q: %w", p.Name, err)
	}
	if err := p.validateGPU(); err != nil {
		return fmt.Errorf("profile %q: gpu: %w", p.Name, err)
	}
	if err := p.OutputLength.Validate(); err != nil {
		return fmt.Errorf("profile %q: output_length: %w", p.Name, err)
	}
	if p.ReasoningLength != (LengthDist{}) {
		if err := p.ReasoningLength.Validate(); err != nil {
			return fmt.Errorf("profile %q: reasoning_length: %w", p.Name, err)
		}
	}
	for _, effort := range slices.Sorted(maps.Keys(p.ReasoningEffort)) {
		if strings.TrimSpace(effort) == "" {
			return fmt.Errorf("profile %q: reasoning_effort: an empty effort name", p.Name)
		}
		if err := p.ReasoningEffort[effort].Validate(); err != nil {
			return fmt.Errorf("profile %q: reasoning_effort %q: %w", p.Name, effort, err)
		}
	}
	if err := p.Faults.Validate(); err != nil {
		return fmt.Errorf("profile %q: faults: %w", p.Name, err)
	}
	return nil
}

func (p Profile) validateEngine() error {
	positive := []struct {
		field string
		v     int
	}{
		{"max_model_len", p.MaxModelLen},
		{"max_num_seqs", p.MaxNumSeqs},
		{"max_num_batched_tokens", p.MaxNumBatchedTokens},
		{"block_size", p.BlockSize},
		{"num_gpu_blocks", p.NumGPUBlocks},
	}
	for _, f := range positive {
		if f.v <= 0 {
			return fmt.Errorf("%s must be > 0, got %d", f.field, f.v)
		}
	}
	switch {
	case p.Model == "":
		return errors.New("model must be set")
	case p.MaxModelLen > p.NumGPUBlocks*p.BlockSize:
		return fmt.Errorf("max_model_len %d exceeds the KV cache (num_gpu_blocks %d × block_size %d = %d tokens): one request could never be scheduled",
			p.MaxModelLen, p.NumGPUBlocks, p.BlockSize, p.NumGPUBlocks*p.BlockSize)
	case p.DisableChunkedPrefill && p.MaxNumBatchedTokens < p.MaxModelLen:
		return fmt.Errorf("max_num_batched_tokens %d is below max_model_len %d: without chunked prefill a long prompt could never be scheduled",
			p.MaxNumBatchedTokens, p.MaxModelLen)
	case p.KVWatermark >= 1:
		return fmt.Errorf("kv_watermark must be < 1, got %g", p.KVWatermark)
	case p.QueueLimit < 0:
		return fmt.Errorf("queue_limit must be >= 0 (0 = unlimited), got %d", p.QueueLimit)
	case p.QueueFullStatus != 0 && p.QueueFullStatus != 429 && p.QueueFullStatus != 503:
		return fmt.Errorf("queue_full_status must be 429 or 503, got %d", p.QueueFullStatus)
	case p.Cost.StepOverhead <= 0:
		return fmt.Errorf("cost.step_overhead must be > 0, got %s", p.Cost.StepOverhead)
	case p.Cost.PrefillPerToken < 0 || p.Cost.DecodePerSeq < 0 || p.Cost.KVReadPerToken < 0 || p.Cost.WaitingPerRequest < 0:
		return errors.New("cost coefficients must be >= 0")
	}
	return nil
}

func (p Profile) validateGPU() error {
	g := p.GPU
	switch {
	case g.Count < 0:
		return fmt.Errorf("count must be >= 0, got %d", g.Count)
	case g.Count == 0:
		return nil
	case g.MemoryMiB <= 0 || g.KVBytesPerToken <= 0 || g.WeightsMiB <= 0:
		return errors.New("memory_mib, weights_mib and kv_bytes_per_token must be > 0 when count > 0")
	case g.IdleWatts < 0 || g.MaxWatts < g.IdleWatts:
		return fmt.Errorf("need 0 <= idle_watts <= max_watts, got %g and %g", g.IdleWatts, g.MaxWatts)
	case p.FramebufferUsedMiB() > g.MemoryMiB:
		return fmt.Errorf("weights + KV cache + reserved = %d MiB per GPU exceeds memory_mib %d",
			p.FramebufferUsedMiB(), g.MemoryMiB)
	}
	return nil
}

// LoadProfile reads a profile from a YAML file. Unknown fields are errors,
// so a typo cannot silently fall back to a default.
func LoadProfile(path string) (Profile, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Profile{}, fmt.Errorf("sim profile: %w", err)
	}
	p, err := ParseProfile(data)
	if err != nil {
		return Profile{}, fmt.Errorf("sim profile %s: %w", path, err)
	}
	return p, nil
}

// ParseProfile decodes a YAML profile. A document may start from a preset
// with `base: NAME` and override only what differs.
func ParseProfile(data []byte) (Profile, error) {
	var head struct {
		Base string `yaml:"base"`
	}
	if err := yaml.Unmarshal(data, &head); err != nil {
		return Profile{}, err
	}
	var doc struct {
		Base    string `yaml:"base"`
		Profile `yaml:",inline"`
	}
	if head.Base != "" {
		base, err := LookupProfile(head.Base)
		if err != nil {
			return Profile{}, fmt.Errorf("base: %w", err)
		}
		base.Faults = base.Faults.clone()
		doc.Profile = base
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&doc); err != nil && !errors.Is(err, io.EOF) {
		return Profile{}, err
	}
	p := doc.Profile.WithDefaults()
	return p, p.Validate()
}

// Reasons reports whether the profile's model reasons before it answers
// (ReasoningLength or ReasoningEffort set).
func (p Profile) Reasons() bool {
	return p.ReasoningLength != (LengthDist{}) || len(p.ReasoningEffort) > 0
}

// reasoningFor is the reasoning length of a request naming effort: the
// effort's own, else ReasoningLength; ok is false when the request does
// not reason.
func (p Profile) reasoningFor(effort string) (d LengthDist, ok bool) {
	if d, ok := p.ReasoningEffort[effort]; ok && effort != "" {
		return d, true
	}
	return p.ReasoningLength, p.ReasoningLength != (LengthDist{})
}
