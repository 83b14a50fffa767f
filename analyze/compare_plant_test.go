package analyze

import (
	"math"
	"math/rand/v2"

	"github.com/inferload/inferload/record"
)

// plant describes a synthetic closed-loop run: users send back to back;
// each reply has a lognormal TTFT, 20–60 tokens and lognormal gaps, all
// stretched by slowdown. Records are generated, not measured, so the
// comparison's verdict is tested against a known truth.
type plant struct {
	seed      uint64
	slowdown  float64 // 1.15 = every latency 15% longer
	users     int
	classes   []string // round-robin class of each request; nil = unclassed
	failEvery int      // every n-th request fails with a 5xx; 0 = none
	accuracy  float64  // each success graded, right with this chance; 0 = ungraded
	reasoning int      // the first this many events of each reply are reasoning; 0 = none
}

const (
	plantWarmupUS  = 5_000_000
	plantMeasureUS = 65_000_000
)

// samples generates the plant's records into RunSamples named name and
// closes its window on the plant's clock marks, as a run directory with
// these records and events would load.
func (p plant) samples(name string) *RunSamples {
	rng := rand.New(rand.NewPCG(p.seed, 7))
	rs := NewRunSamples(name)
	id := uint64(0)
	for u := 0; u < p.users; u++ {
		for at := int64(0); at < plantMeasureUS; {
			id++
			r := p.request(rng, id, at)
			rs.Add(r)
			at = r.DoneUS()
		}
	}
	var info record.RunInfo
	for _, e := range []record.Event{
		{Kind: record.EventRunStart, Message: "2026-01-02T03:04:05Z"},
		{TimeUS: plantWarmupUS, Kind: record.EventWarmupEnd},
		{TimeUS: plantMeasureUS, Kind: record.EventMeasureEnd},
		{TimeUS: plantMeasureUS + 5_000_000, Kind: record.EventRunEnd},
	} {
		info.Apply(&e)
	}
	rs.Close(info)
	return rs
}

func (p plant) request(rng *rand.Rand, id uint64, sendUS int64) *record.Result {
	r := &record.Result{ID: id, SendUS: sendUS, Stream: true, Warmup: sendUS < plantWarmupUS,
		TokenSource: record.TokensUsage, InputTokens: 100}
	if len(p.classes) > 0 {
		r.Class = p.classes[int(id)%len(p.classes)]
	}
	if p.failEvery > 0 && id%uint64(p.failEvery) == 0 {
		r.Error, r.Status, r.E2EUS = record.ErrHTTP5xx, 503, 20_000
		return r
	}
	lognormal := func(medianUS, sigma float64) int64 {
		return int64(medianUS * p.slowdown * math.Exp(sigma*rng.NormFloat64()))
	}
	r.OutputTokens = 20 + rng.IntN(41)
	at := lognormal(100_000, 0.4)
	r.TTFTUS = at
	r.EventsUS = make([]int64, r.OutputTokens)
	for i := range r.EventsUS {
		if i > 0 {
			at += lognormal(20_000, 0.3)
		}
		r.EventsUS[i] = at
	}
	r.E2EUS = at + 1_000
	if p.reasoning > 0 {
		r.ReasoningEvents = min(p.reasoning, r.OutputTokens-1)
		r.TTFRUS, r.TTFOUS = r.TTFTUS, r.EventsUS[r.ReasoningEvents]
	}
	if p.accuracy > 0 {
		r.Graded, r.Correct = true, rng.Float64() < p.accuracy
	}
	return r
}
