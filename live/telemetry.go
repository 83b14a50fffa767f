package live

import (
	"github.com/inferload/inferload/observe"
)

// liveTelemetry are the telemetry series the page draws (docs/telemetry.md
// defines them): the server's queue and batch, KV cache and GPUs, and the
// client's own saturation signals. Other series stay in telemetry.jsonl.
var liveTelemetry = []string{
	"queue_depth", "running", "kv_cache_usage", "gpu_util_pct", "gpu_mem_used_frac",
	"client_cpu_pct", "client_sched_lag_p99_ms", "client_pacer_lag_ms",
}

// TelemetryPoint is one telemetry sample as the page draws it.
type TelemetryPoint struct {
	T float64 `json:"t"` // seconds since the run started
	// Client is set for the load generator's own samples.
	Client bool               `json:"client,omitempty"`
	Values map[string]float64 `json:"values"`
}

// Sample keeps the page's series of one telemetry sample (a gap keeps
// nothing). Safe for concurrent use.
func (m *Monitor) Sample(s observe.Sample) {
	if s.Gap || len(s.Values) == 0 {
		return
	}
	p := TelemetryPoint{T: float64(s.TimeUS) / 1e6, Client: s.Source == "client", Values: map[string]float64{}}
	for _, k := range liveTelemetry {
		if v, ok := s.Values[k]; ok {
			p.Values[k] = v
		}
	}
	if len(p.Values) == 0 {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	// A few sources a second (client, server, GPUs): the bound keeps
	// about the points' window of each.
	if len(m.tel) == 4*m.window {
		m.tel = append(m.tel[:0], m.tel[1:]...)
	}
	m.tel = append(m.tel, p)
	m.telSeq++
}

// telemetrySince is the kept samples numbered since and later, and the
// first one's number.
func (m *Monitor) telemetrySince(since int64) ([]TelemetryPoint, int64) {
	first := m.telSeq - int64(len(m.tel))
	from := min(max(since, first), m.telSeq) // past the last sample: none yet
	return append([]TelemetryPoint(nil), m.tel[from-first:]...), from
}
