package record

// ServerTelemetry summarises each observed source (Prometheus endpoints,
// local GPUs) over the measured window. package observe fills it from
// telemetry.jsonl; docs/telemetry.md defines every series.
type ServerTelemetry struct {
	Sources []TelemetrySource `json:"sources"`
}

// TelemetrySource is one source's figures.
type TelemetrySource struct {
	// Source is the scrape URL, or "gpu".
	Source string `json:"source"`
	// Kind is the metric map or GPU backend used (vllm+dcgm, nvml, ...).
	Kind string `json:"kind"`
	// Samples counts samples in the measured window; Gaps those that failed.
	Samples int64 `json:"samples"`
	Gaps    int64 `json:"gaps"`
	// ScrapeLatencyMaxMS is the slowest scrape.
	ScrapeLatencyMaxMS float64 `json:"scrape_latency_max_ms"`
	// Series holds each derived series' mean, max and last value.
	Series map[string]SeriesStats `json:"series"`
}

// SeriesStats summarises one series over the measured window.
type SeriesStats struct {
	Mean float64 `json:"mean"`
	Max  float64 `json:"max"`
	Last float64 `json:"last"`
}

// ClientTelemetry is the load generator's own load.
type ClientTelemetry struct {
	CPUPctMean       float64 `json:"cpu_pct_mean"`
	CPUPctMax        float64 `json:"cpu_pct_max"`
	RSSMaxMiB        float64 `json:"rss_max_mib"`
	GoroutinesMax    float64 `json:"goroutines_max"`
	GCPauseTotalMS   float64 `json:"gc_pause_total_ms"`
	GCPauseMaxMS     float64 `json:"gc_pause_max_ms"`
	SchedLagP99MaxMS float64 `json:"sched_lag_p99_max_ms"`
	PacerLagMaxMS    float64 `json:"pacer_lag_max_ms"`
	BytesInPerSMean  float64 `json:"bytes_in_per_s_mean"`
	BytesOutPerSMean float64 `json:"bytes_out_per_s_mean"`
	// SaturatedSeconds is how many seconds of the run clock the client was
	// past a saturation threshold.
	SaturatedSeconds int64 `json:"saturated_seconds"`
	// Saturated is set when the client was past a threshold for several
	// seconds in a row: the results may measure the client, not the server.
	Saturated bool `json:"saturated"`
	// ServerBound is set on an open-loop run whose late starts waited on
	// the in-flight cap while the client had room and completions fell
	// behind arrivals: the server's saturation held the cap full, not the
	// client's (then Saturated is false).
	ServerBound bool `json:"server_bound,omitempty"`
	// Verdict is one sentence for reports.
	Verdict string `json:"verdict"`
	// SaturatedSegments, in a run merged from segments, names the
	// segments ("I/N") whose own client was saturated; absent otherwise.
	SaturatedSegments []string `json:"saturated_segments,omitempty"`
}

// Hint is one bottleneck hint and the figures that triggered it.
type Hint struct {
	// Rule names the documented rule (compute_bound, memory_bound, ...).
	Rule    string             `json:"rule"`
	Message string             `json:"message"`
	Figures map[string]float64 `json:"figures"`
}
