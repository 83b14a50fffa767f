package observe

import (
	"math"
)

// Sample is one line of telemetry.jsonl: what one source showed in one
// second of the run.
type Sample struct {
	// TS is the second of the run clock the sample belongs to: the same key
	// as series.jsonl's t_s.
	TS int64 `json:"t_s"`
	// TimeUS is the run-clock offset of the middle of the scrape, the best
	// estimate of when the figures were true.
	TimeUS int64 `json:"time_us"`
	// Source names where the figures came from: a scrape URL, "gpu" or
	// "client".
	Source string `json:"source"`
	// Segment, in a run merged from segments, is the segment ("I/N") whose
	// client a "client" sample describes; empty otherwise.
	Segment string `json:"segment,omitempty"`
	// Kind is the metric map used (vllm, dcgm, ...), the GPU backend (nvml,
	// nvidia-smi) or "self".
	Kind string `json:"kind,omitempty"`
	// LatencyMS is how long the scrape took; large values blur the second
	// the figures belong to.
	LatencyMS float64 `json:"latency_ms,omitempty"`
	// Gap is set when the source gave nothing usable this second; Error
	// says why.
	Gap   bool   `json:"gap,omitempty"`
	Error string `json:"error,omitempty"`
	// Values are the derived series (docs/telemetry.md), by name.
	Values map[string]float64 `json:"values,omitempty"`
}

// set stores a finite value; NaN and infinities (an empty histogram delta,
// a division by zero) are left out because JSON cannot carry them and a
// missing value reads better than a made-up one.
func (s *Sample) set(name string, v float64) {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return
	}
	if s.Values == nil {
		s.Values = make(map[string]float64)
	}
	s.Values[name] = v
}

// The derived series names. Server figures come from whichever metric map
// matched; GPU figures from DCGM, Triton, NVML or nvidia-smi.
const (
	QueueDepth    = "queue_depth"           // requests waiting
	RunningBatch  = "running"               // requests in the running batch
	KVCacheUsage  = "kv_cache_usage"        // 0..1
	PrefixHitRate = "prefix_cache_hit_rate" // 0..1 over the window
	// PrefixHitTokensPerS and PrefixQueryTokensPerS are the prompt tokens
	// a prefix cache served and was asked for, per second (vLLM's
	// counters): their ratio over a run is the share it served.
	PrefixHitTokensPerS   = "prefix_cache_hit_tokens_per_s"
	PrefixQueryTokensPerS = "prefix_cache_query_tokens_per_s"
	PreemptionsPerS       = "preemptions_per_s"
	PromptTokensPerS      = "prompt_tokens_per_s"
	OutputTokensPerS      = "output_tokens_per_s"
	ServerTTFT            = "server_ttft"       // + _p50_ms, _p90_ms, _p99_ms, _mean_ms
	ServerITL             = "server_itl"        // idem
	ServerQueueTime       = "server_queue"      // idem
	GPUUtil               = "gpu_util_pct"      // mean over GPUs, 0..100
	GPUMemUsedMiB         = "gpu_mem_used_mib"  // sum over GPUs
	GPUMemTotalMiB        = "gpu_mem_total_mib" // sum over GPUs
	GPUMemUsedFrac        = "gpu_mem_used_frac" // used / total
	GPUPowerW             = "gpu_power_w"       // sum over GPUs
	HostCPUPct            = "host_cpu_pct"      // node_exporter: busy share of all cores
	HostMemAvailMiB       = "host_mem_available_mib"
	HostNetInBytesPS      = "host_net_in_bytes_per_s"
	HostNetOutBytesPS     = "host_net_out_bytes_per_s"
)
