package observe

import (
	"fmt"
	"slices"
	"strings"

	dto "github.com/prometheus/client_model/go"
)

// how says how a rule turns metric families into one figure.
type how int

const (
	gauge      how = iota // the current value, summed (or averaged) over label sets
	rate                  // counter increase per second over the window
	ratio                 // increase of names ÷ increase of other
	share                 // increase of names ÷ (increase of names + increase of other)
	histogram             // percentiles (ms) of the observations made in the window
	idleToBusy            // 100 × (1 − increase of names ÷ increase of other)
	sumRate               // a histogram's sum, increase per second (TGI's token counts)
)

// rule derives one series from the first of its metric names that the
// scrape holds. Several rules may feed one series (old and new names of
// the same server); the first that yields a value wins.
type rule struct {
	series string
	how    how
	names  []string
	other  []string // denominator for ratio, share, idleToBusy
	scale  float64  // multiplies the value; 0 means 1
	mean   bool     // gauge: average over label sets (per-GPU utilisation) instead of sum
	match  [2]string
}

// Map is the metric names of one kind of exporter, from its documentation.
type Map struct {
	// Kind names the exporter: vllm, sglang, tgi, triton, torchserve,
	// llamacpp, dcgm, node.
	Kind string
	// marker is a metric whose presence identifies the exporter.
	markers []string
	rules   []rule
}

// seconds converts a histogram or counter in seconds to milliseconds.
const seconds = 1000

// Built-in maps, each from the exporter's documented metric names:
// vLLM docs/design/metrics (V1 names first, V0 names after), SGLang
// docs/references/production_metrics, TGI's router metrics, Triton's
// metrics.md, TorchServe's metrics API, llama.cpp server README (--metrics), DCGM exporter's
// default-counters.csv and node_exporter's cpu/meminfo/netdev collectors.
var builtinMaps = []Map{
	{Kind: "vllm", markers: []string{"vllm:num_requests_running", "vllm:num_requests_waiting"}, rules: []rule{
		{series: QueueDepth, how: gauge, names: []string{"vllm:num_requests_waiting"}},
		{series: RunningBatch, how: gauge, names: []string{"vllm:num_requests_running"}},
		{series: KVCacheUsage, how: gauge, names: []string{"vllm:kv_cache_usage_perc", "vllm:gpu_cache_usage_perc"}, mean: true},
		{series: PrefixHitRate, how: ratio, names: []string{"vllm:prefix_cache_hits_total", "vllm:gpu_prefix_cache_hits_total"}, other: []string{"vllm:prefix_cache_queries_total", "vllm:gpu_prefix_cache_queries_total"}},
		{series: PrefixHitRate, how: gauge, names: []string{"vllm:gpu_prefix_cache_hit_rate"}, mean: true},
		{series: PrefixHitTokensPerS, how: rate, names: []string{"vllm:prefix_cache_hits_total", "vllm:gpu_prefix_cache_hits_total"}},
		{series: PrefixQueryTokensPerS, how: rate, names: []string{"vllm:prefix_cache_queries_total", "vllm:gpu_prefix_cache_queries_total"}},
		{series: PreemptionsPerS, how: rate, names: []string{"vllm:num_preemptions_total"}},
		{series: PromptTokensPerS, how: rate, names: []string{"vllm:prompt_tokens_total"}},
		{series: OutputTokensPerS, how: rate, names: []string{"vllm:generation_tokens_total"}},
		{series: ServerTTFT, how: histogram, names: []string{"vllm:time_to_first_token_seconds"}, scale: seconds},
		{series: ServerITL, how: histogram, names: []string{"vllm:inter_token_latency_seconds", "vllm:time_per_output_token_seconds"}, scale: seconds},
		{series: ServerQueueTime, how: histogram, names: []string{"vllm:request_queue_time_seconds"}, scale: seconds},
	}},
	{Kind: "sglang", markers: []string{"sglang:num_running_reqs", "sglang:num_queue_reqs"}, rules: []rule{
		{series: QueueDepth, how: gauge, names: []string{"sglang:num_queue_reqs"}},
		{series: RunningBatch, how: gauge, names: []string{"sglang:num_running_reqs"}},
		{series: KVCacheUsage, how: gauge, names: []string{"sglang:token_usage"}, mean: true},
		{series: PrefixHitRate, how: gauge, names: []string{"sglang:cache_hit_rate"}, mean: true},
		{series: PromptTokensPerS, how: rate, names: []string{"sglang:prompt_tokens_total"}},
		{series: OutputTokensPerS, how: rate, names: []string{"sglang:generation_tokens_total"}},
		{series: ServerTTFT, how: histogram, names: []string{"sglang:time_to_first_token_seconds"}, scale: seconds},
		{series: ServerITL, how: histogram, names: []string{"sglang:inter_token_latency_seconds", "sglang:time_per_output_token_seconds"}, scale: seconds},
		{series: ServerQueueTime, how: histogram, names: []string{"sglang:queue_time_seconds"}, scale: seconds},
	}},
	{Kind: "tgi", markers: []string{"tgi_queue_size", "tgi_batch_current_size"}, rules: []rule{
		{series: QueueDepth, how: gauge, names: []string{"tgi_queue_size"}},
		{series: RunningBatch, how: gauge, names: []string{"tgi_batch_current_size"}},
		{series: OutputTokensPerS, how: sumRate, names: []string{"tgi_request_generated_tokens"}},
		{series: PromptTokensPerS, how: sumRate, names: []string{"tgi_request_input_length"}},
		{series: ServerITL, how: histogram, names: []string{"tgi_request_mean_time_per_token_duration"}, scale: seconds},
		{series: ServerQueueTime, how: histogram, names: []string{"tgi_request_queue_duration"}, scale: seconds},
	}},
	{Kind: "triton", markers: []string{"nv_inference_request_success", "nv_inference_pending_request_count"}, rules: []rule{
		{series: QueueDepth, how: gauge, names: []string{"nv_inference_pending_request_count"}},
		// Triton keeps cumulative microseconds, not a histogram: the mean
		// queue time of the window is Δqueue_us ÷ Δrequests.
		{series: ServerQueueTime + "_mean_ms", how: ratio, names: []string{"nv_inference_queue_duration_us"}, other: []string{"nv_inference_request_success"}, scale: 0.001},
		{series: ServerTTFT, how: histogram, names: []string{"nv_inference_first_response_histogram_ms"}},
		{series: GPUUtil, how: gauge, names: []string{"nv_gpu_utilization"}, mean: true, scale: 100},
		{series: GPUMemUsedMiB, how: gauge, names: []string{"nv_gpu_memory_used_bytes"}, scale: 1.0 / (1 << 20)},
		{series: GPUMemTotalMiB, how: gauge, names: []string{"nv_gpu_memory_total_bytes"}, scale: 1.0 / (1 << 20)},
		{series: GPUPowerW, how: gauge, names: []string{"nv_gpu_power_usage"}},
	}},
	{Kind: "torchserve", markers: []string{"ts_inference_requests_total"}, rules: []rule{
		// TorchServe keeps cumulative microseconds, as Triton does: the
		// window's mean queue time is Δqueue_us ÷ Δrequests.
		{series: ServerQueueTime + "_mean_ms", how: ratio, names: []string{"ts_queue_latency_microseconds"}, other: []string{"ts_inference_requests_total"}, scale: 0.001},
	}},
	{Kind: "llamacpp", markers: []string{"llamacpp:requests_processing", "llamacpp:tokens_predicted_total"}, rules: []rule{
		{series: QueueDepth, how: gauge, names: []string{"llamacpp:requests_deferred"}},
		{series: RunningBatch, how: gauge, names: []string{"llamacpp:requests_processing"}},
		{series: KVCacheUsage, how: gauge, names: []string{"llamacpp:kv_cache_usage_ratio"}},
		// prompt_tokens_total excludes cached tokens, so the hit rate is
		// cached ÷ (cached + processed).
		{series: PrefixHitRate, how: share, names: []string{"llamacpp:prompt_tokens_cached_total"}, other: []string{"llamacpp:prompt_tokens_total"}},
		{series: PromptTokensPerS, how: rate, names: []string{"llamacpp:prompt_tokens_total"}},
		{series: OutputTokensPerS, how: rate, names: []string{"llamacpp:tokens_predicted_total"}},
	}},
	{Kind: "dcgm", markers: []string{"DCGM_FI_DEV_GPU_UTIL", "DCGM_FI_DEV_FB_USED"}, rules: []rule{
		{series: GPUUtil, how: gauge, names: []string{"DCGM_FI_DEV_GPU_UTIL"}, mean: true},
		{series: GPUMemUsedMiB, how: gauge, names: []string{"DCGM_FI_DEV_FB_USED"}},
		{series: GPUPowerW, how: gauge, names: []string{"DCGM_FI_DEV_POWER_USAGE"}},
	}},
	{Kind: "node", markers: []string{"node_cpu_seconds_total"}, rules: []rule{
		{series: HostCPUPct, how: idleToBusy, names: []string{"node_cpu_seconds_total"}, other: []string{"node_cpu_seconds_total"}, match: [2]string{"mode", "idle"}},
		{series: HostMemAvailMiB, how: gauge, names: []string{"node_memory_MemAvailable_bytes"}, scale: 1.0 / (1 << 20)},
		{series: HostNetInBytesPS, how: rate, names: []string{"node_network_receive_bytes_total"}},
		{series: HostNetOutBytesPS, how: rate, names: []string{"node_network_transmit_bytes_total"}},
	}},
}

// MapKinds lists the built-in exporter kinds, for validation and help.
func MapKinds() []string {
	out := make([]string, len(builtinMaps))
	for i, m := range builtinMaps {
		out[i] = m.Kind
	}
	return out
}

// LookupMap returns the built-in map of kind.
func LookupMap(kind string) (Map, error) {
	for _, m := range builtinMaps {
		if m.Kind == kind {
			return m, nil
		}
	}
	return Map{}, fmt.Errorf("unknown server kind %q (known: auto, %s)", kind, strings.Join(MapKinds(), ", "))
}

// Detect returns the kinds whose marker metrics the scrape holds, in the
// built-in order. One endpoint can match several (a Triton server exports
// its own GPU metrics; a simulator exports vLLM and DCGM names).
func Detect(fams map[string]*dto.MetricFamily) []string {
	var kinds []string
	for _, m := range builtinMaps {
		if slices.ContainsFunc(m.markers, func(n string) bool { return fams[n] != nil }) {
			kinds = append(kinds, m.Kind)
		}
	}
	return kinds
}
