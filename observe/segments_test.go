package observe

import (
	"slices"
	"strings"
	"testing"

	"github.com/inferload/inferload/record"
)

// TestClientOfSegments: in a run merged from segments, the client is
// saturated when one segment's own client was, judged on that segment's
// series alone, and the verdict names it; an idle set of segments is not.
func TestClientOfSegments(t *testing.T) {
	t.Parallel()
	var samples []Sample
	for sec := range 8 {
		for seg, cpu := range map[string]float64{"0/2": 10, "1/2": 99} {
			samples = append(samples, Sample{TS: int64(sec), TimeUS: int64(sec) * 1e6, Source: "client", Segment: seg,
				Values: map[string]float64{ClientCPUPct: cpu, ClientSchedLagP99: 1}})
		}
	}
	s := &record.Summary{}
	Summarize(samples, record.RunInfo{EndUS: 10e6}, s)
	c := s.Client
	if c == nil || !c.Saturated || !slices.Equal(c.SaturatedSegments, []string{"1/2"}) || !strings.Contains(c.Verdict, "segment 1/2") {
		t.Fatalf("client %+v: want saturated, naming segment 1/2", c)
	}
	for i := range samples {
		samples[i].Values[ClientCPUPct] = 10
	}
	s = &record.Summary{}
	Summarize(samples, record.RunInfo{EndUS: 10e6}, s)
	if s.Client.Saturated || len(s.Client.SaturatedSegments) != 0 || !strings.Contains(s.Client.Verdict, "any of 2 segments") {
		t.Errorf("idle segments: client %+v", s.Client)
	}
}
