package record

import (
	"runtime"
	"testing"
)

// soakHours is the simulated length of BenchmarkSoakMemory's run clock.
const soakHours = 24

// BenchmarkSoakMemory fast-forwards a 24-hour soak through the recorder's
// whole aggregation path (Aggregate with two classes, the input-length
// buckets, goodput under SLOs, FLOPs, and the per-second Series) and
// reports the live heap after a GC at every simulated hour: the growth per
// hour is what a real soak's client would accumulate. Run it with
//
//	go test -run '^$' -bench SoakMemory -benchtime 1x ./record/
//
// b.N is ignored: one iteration is the whole simulated day.
func BenchmarkSoakMemory(b *testing.B) {
	const perSecond = 20 // 1.7 M requests over the day
	for b.Loop() {
		a, s := soakAggregate()
		var heap [soakHours + 1]uint64
		heap[0] = liveHeap()
		r := &Result{Stream: true, InputTokens: 512, PromptTokensSent: 512, OutputTokens: 16,
			TokenSource: TokensUsage, EventsUS: make([]int64, 16)}
		for h := range soakHours {
			for k := range 3600 * perSecond {
				soakResult(r, int64(h)*3600_000_000+int64(k)*1_000_000/perSecond, k)
				a.Add(r)
				s.Add(r)
			}
			heap[h+1] = liveHeap()
		}
		s.Flush()
		_ = a.Summary(RunInfo{Mode: ModeOpen, WarmupEndUS: 600_000_000, MeasureEndUS: soakHours * 3600_000_000})
		// The meters hold their first hour and latest one to two hours in
		// fine slots: the heap settles by hour 4. Growth over the last 12
		// hours is what a longer soak would keep adding.
		b.ReportMetric(float64(heap[1]-heap[0])/1e6, "MB-hour1")
		b.ReportMetric(float64(heap[4])/1e6, "MB-live-4h")
		b.ReportMetric((float64(heap[soakHours])-float64(heap[soakHours-12]))/12/1e6, "MB/h-last-12h")
		b.ReportMetric(float64(heap[soakHours])/1e6, "MB-live-24h")
	}
}

// soakAggregate is an aggregate configured as a soak with classes, SLOs
// and a model would configure it, and a Series that discards its windows.
func soakAggregate() (*Aggregate, *Series) {
	a := NewAggregate()
	a.SetSLOs(&SLOs{Default: SLO{TTFTMs: 200, TPOTMs: 50}, Classes: map[string]SLO{"long": {TTFTMs: 800}}})
	a.SetModel(&Model{ParamsB: 8, Layers: 32, Hidden: 4096})
	return a, NewSeries(func(Window) {})
}

// soakResult rewrites r in place as the k-th request sent at sendUS: two
// classes, prompt lengths across the default buckets, 16 streamed tokens.
func soakResult(r *Result, sendUS int64, k int) {
	r.ID = uint64(k)
	r.Class, r.PromptTokensSent, r.InputTokens = "chat", 128+k%7*300, 128+k%7*300
	if k%4 == 0 {
		r.Class = "long"
	}
	r.SendUS, r.IntendedUS, r.OpenLoop = sendUS, sendUS, true
	r.TTFTUS = 50_000 + int64(k%97)*1000
	for i := range r.EventsUS {
		r.EventsUS[i] = r.TTFTUS + int64(i)*20_000
	}
	r.E2EUS = r.EventsUS[len(r.EventsUS)-1] + 1000
	r.Warmup = sendUS < 600_000_000
}

// liveHeap is the heap in use after a full collection.
func liveHeap() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}
