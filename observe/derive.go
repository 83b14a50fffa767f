package observe

import (
	"math"
	"slices"

	dto "github.com/prometheus/client_model/go"
)

// families is one parsed scrape, by metric name.
type families = map[string]*dto.MetricFamily

// derive applies the maps to the current scrape and, for counters and
// histograms, to its difference from the previous one (prev may be nil on
// the first scrape: then only gauges are known). elapsedS is the time
// between the two scrapes.
func derive(s *Sample, maps []Map, prev, cur families, elapsedS float64) {
	for _, m := range maps {
		for _, r := range m.rules {
			if _, done := s.Values[r.series]; done || hasHist(s, r) {
				continue
			}
			r.apply(s, prev, cur, elapsedS)
		}
	}
	gpuMemory(s, cur)
}

// hasHist says a histogram series already has its percentiles.
func hasHist(s *Sample, r rule) bool {
	_, ok := s.Values[r.series+"_count"]
	return r.how == histogram && ok
}

// apply derives r's series into s if its metrics are present.
func (r rule) apply(s *Sample, prev, cur families, elapsedS float64) {
	scale := r.scale
	if scale == 0 {
		scale = 1
	}
	name, f := firstPresent(cur, r.names)
	if f == nil {
		return
	}
	if r.how == gauge {
		v, n := total(f, r.match)
		if r.mean && n > 0 {
			v /= float64(n)
		}
		s.set(r.series, v*scale)
		return
	}
	if prev == nil || elapsedS <= 0 {
		return
	}
	switch r.how {
	case histogram:
		histDelta(s, r.series, prev[name], f, scale)
		return
	case sumRate:
		c, p := sumHist(f).sum, 0.0
		if prev[name] != nil {
			p = sumHist(prev[name]).sum
		}
		if c < p {
			p = 0 // a reset
		}
		s.set(r.series, (c-p)/elapsedS*scale)
		return
	}
	num := increase(prev[name], f, r.match)
	switch r.how {
	case rate:
		s.set(r.series, num/elapsedS*scale)
	case ratio, share, idleToBusy:
		oname, of := firstPresent(cur, r.other)
		if of == nil {
			return
		}
		den := increase(prev[oname], of, [2]string{})
		r.setRatio(s, num, den, scale)
	}
}

// setRatio finishes the rules that divide two increases. A window with no
// increase in the denominator has no defined ratio and is left out.
func (r rule) setRatio(s *Sample, num, den, scale float64) {
	switch r.how {
	case ratio:
		if den > 0 {
			s.set(r.series, num/den*scale)
		}
	case share:
		if num+den > 0 {
			s.set(r.series, num/(num+den)*scale)
		}
	case idleToBusy:
		if den > 0 {
			s.set(r.series, 100*(1-num/den))
		}
	}
}

// firstPresent returns the first of names the scrape holds.
func firstPresent(fams families, names []string) (string, *dto.MetricFamily) {
	for _, n := range names {
		if f := fams[n]; f != nil {
			return n, f
		}
	}
	return "", nil
}

// matches says m carries label match[0]=match[1] (always, when unset).
func matches(m *dto.Metric, match [2]string) bool {
	if match[0] == "" {
		return true
	}
	for _, l := range m.GetLabel() {
		if l.GetName() == match[0] {
			return l.GetValue() == match[1]
		}
	}
	return false
}

// total sums a gauge, counter or untyped family over its label sets and
// says how many there were.
func total(f *dto.MetricFamily, match [2]string) (float64, int) {
	var v float64
	n := 0
	for _, m := range f.GetMetric() {
		if !matches(m, match) {
			continue
		}
		switch {
		case m.Gauge != nil:
			v += m.GetGauge().GetValue()
		case m.Counter != nil:
			v += m.GetCounter().GetValue()
		case m.Untyped != nil:
			v += m.GetUntyped().GetValue()
		default:
			continue
		}
		n++
	}
	return v, n
}

// increase is a counter's growth between two scrapes. A smaller value
// means the server restarted (a counter reset): as in Prometheus, the
// whole current value is taken as the increase.
func increase(prev, cur *dto.MetricFamily, match [2]string) float64 {
	c, _ := total(cur, match)
	if prev == nil {
		return 0
	}
	p, _ := total(prev, match)
	if c < p {
		return c
	}
	return c - p
}

// cumHist is a histogram summed over label sets.
type cumHist struct {
	bounds []float64 // upper bounds, ascending, +Inf last when present
	counts []float64 // cumulative counts per bound
	count  float64
	sum    float64
}

func sumHist(f *dto.MetricFamily) cumHist {
	byBound := map[float64]float64{}
	var h cumHist
	for _, m := range f.GetMetric() {
		hm := m.GetHistogram()
		if hm == nil {
			continue
		}
		h.count += float64(hm.GetSampleCount())
		h.sum += hm.GetSampleSum()
		for _, b := range hm.GetBucket() {
			byBound[b.GetUpperBound()] += float64(b.GetCumulativeCount())
		}
	}
	for b := range byBound {
		h.bounds = append(h.bounds, b)
	}
	slices.Sort(h.bounds)
	for _, b := range h.bounds {
		h.counts = append(h.counts, byBound[b])
	}
	return h
}

// histDelta sets <series>_p50_ms, _p90_ms, _p99_ms, _mean_ms and _count
// from the observations made between two scrapes. Percentiles of a window
// cannot come from the cumulative histogram: subtracting the previous
// scrape's buckets leaves exactly the window's observations.
func histDelta(s *Sample, series string, prev, cur *dto.MetricFamily, scale float64) {
	c := sumHist(cur)
	if prev != nil {
		p := sumHist(prev)
		if p.count <= c.count && slices.Equal(p.bounds, c.bounds) {
			for i := range c.counts {
				c.counts[i] -= p.counts[i]
			}
			c.count -= p.count
			c.sum -= p.sum
		}
	}
	s.set(series+"_count", c.count)
	if c.count <= 0 {
		return
	}
	for _, q := range []struct {
		name string
		q    float64
	}{{"_p50_ms", 0.50}, {"_p90_ms", 0.90}, {"_p99_ms", 0.99}} {
		s.set(series+q.name, c.quantile(q.q)*scale)
	}
	s.set(series+"_mean_ms", c.sum/c.count*scale)
}

// quantile interpolates linearly inside the bucket holding the q-th
// observation (bucketHolding), as Prometheus's histogram_quantile does;
// an observation in the +Inf bucket reports the highest finite bound.
func (h cumHist) quantile(q float64) float64 {
	rank := q * h.count
	i := bucketHolding(h.counts, rank)
	if i == len(h.bounds) {
		if i == 0 {
			return 0
		}
		return h.bounds[i-1]
	}
	lower, below := 0.0, 0.0
	if i > 0 {
		lower, below = h.bounds[i-1], h.counts[i-1]
	}
	b := h.bounds[i]
	if math.IsInf(b, 1) {
		return lower
	}
	inBucket := h.counts[i] - below
	if inBucket <= 0 {
		return b
	}
	return lower + (b-lower)*(rank-below)/inBucket
}

// bucketHolding is observe's one rule for which histogram bucket holds
// the observation of a rank: the first whose cumulative count (cum[i],
// the observations in buckets 0..i) reaches it; len(cum) when none does.
// The q-th of n observations has rank q·n. The server's histograms
// interpolate inside that bucket (cumHist.quantile); the load
// generator's own take its upper bound (bucketQuantile).
func bucketHolding(cum []float64, rank float64) int {
	for i, c := range cum {
		if c >= rank {
			return i
		}
	}
	return len(cum)
}

// gpuMemory completes the memory figures: DCGM exports used and free, not
// the total, and the OOM rules need the used fraction.
func gpuMemory(s *Sample, cur families) {
	if _, ok := s.Values[GPUMemTotalMiB]; !ok {
		if free := cur["DCGM_FI_DEV_FB_FREE"]; free != nil {
			if used, ok := s.Values[GPUMemUsedMiB]; ok {
				f, _ := total(free, [2]string{})
				s.set(GPUMemTotalMiB, used+f)
			}
		}
	}
	used, ok1 := s.Values[GPUMemUsedMiB]
	tot, ok2 := s.Values[GPUMemTotalMiB]
	if ok1 && ok2 && tot > 0 {
		s.set(GPUMemUsedFrac, used/tot)
	}
}
