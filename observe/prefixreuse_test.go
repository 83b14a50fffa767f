package observe

import (
	"math"
	"testing"

	"github.com/inferload/inferload/record"
)

func TestServedPrefixShare(t *testing.T) {
	t.Parallel()
	src := func(series map[string]float64) record.TelemetrySource {
		out := record.TelemetrySource{Series: map[string]record.SeriesStats{}}
		for k, v := range series {
			out.Series[k] = record.SeriesStats{Mean: v}
		}
		return out
	}
	counters := src(map[string]float64{PrefixHitTokensPerS: 300, PrefixQueryTokensPerS: 1000})
	tests := []struct {
		name      string
		cached    int64
		achieved  float64 // before
		sources   []record.TelemetrySource
		wantFrom  string
		wantShare float64
	}{
		{"the replies said", 5, 0.4, []record.TelemetrySource{counters}, record.ReuseFromRequests, 0.4},
		{"counters over the window", 0, 0, []record.TelemetrySource{counters}, record.ReuseFromCounters, 0.3},
		{"two replicas' counters add up", 0, 0, []record.TelemetrySource{counters,
			src(map[string]float64{PrefixHitTokensPerS: 700, PrefixQueryTokensPerS: 1000})}, record.ReuseFromCounters, 0.5},
		{"a hit-rate gauge (SGLang)", 0, 0, []record.TelemetrySource{src(map[string]float64{PrefixHitRate: 0.62})}, record.ReuseFromHitRate, 0.62},
		{"counters before the gauge", 0, 0, []record.TelemetrySource{src(map[string]float64{PrefixHitRate: 0.9, PrefixHitTokensPerS: 1, PrefixQueryTokensPerS: 4})}, record.ReuseFromCounters, 0.25},
		{"no query counted: nothing known", 0, 0, []record.TelemetrySource{src(map[string]float64{PrefixHitTokensPerS: 0, PrefixQueryTokensPerS: 0})}, record.ReuseFromNone, 0},
		{"no telemetry", 0, 0, nil, record.ReuseFromNone, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := &record.Summary{PrefixReuse: &record.PrefixReuse{Requests: 40, RequestedShare: 0.5, CachedRequests: tc.cached, AchievedShare: tc.achieved}}
			if tc.sources != nil {
				s.Server = &record.ServerTelemetry{Sources: tc.sources}
			}
			ServedPrefixShare(s)
			if pr := s.PrefixReuse; pr.AchievedFrom != tc.wantFrom || math.Abs(pr.AchievedShare-tc.wantShare) > 1e-9 {
				t.Errorf("from %q share %.3f, want %q %.3f", pr.AchievedFrom, pr.AchievedShare, tc.wantFrom, tc.wantShare)
			}
		})
	}
	var none record.Summary
	ServedPrefixShare(&none) // no prefix_reuse: nothing to do
	if none.PrefixReuse != nil {
		t.Error("a prefix_reuse appeared from nothing")
	}
}
