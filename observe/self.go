package observe

import (
	"math"
	"os"
	"runtime"
	"runtime/metrics"
	"slices"
	"strconv"
	"strings"
	"time"
)

// The load generator's own series (Source "client").
const (
	ClientCPUPct       = "client_cpu_pct"     // process CPU ÷ (wall × GOMAXPROCS), 0..100
	ClientCPUCores     = "client_cpu_cores"   // cores' worth of CPU used
	ClientRSSMiB       = "client_rss_mib"     // resident memory
	ClientGoroutines   = "client_goroutines"  // live goroutines
	ClientGCPauseMS    = "client_gc_pause_ms" // stop-the-world GC time in the window
	ClientGCPauseMaxMS = "client_gc_pause_max_ms"
	ClientSchedLagP99  = "client_sched_lag_p99_ms" // runnable → running delay of goroutines
	ClientSchedLagMax  = "client_sched_lag_max_ms"
	ClientPacerLagMS   = "client_pacer_lag_ms" // worst late start of a request in the window
	// ClientRunnable counts goroutines ready to run but waiting for a
	// CPU at the moment of the sample; with ClientGOMAXPROCS it says
	// whether the client had more work than CPUs.
	ClientRunnable   = "client_runnable_goroutines"
	ClientGOMAXPROCS = "client_gomaxprocs"
	ClientBytesInPS  = "client_bytes_in_per_s"
	ClientBytesOutPS = "client_bytes_out_per_s"
)

// runtime/metrics names read each second.
const (
	schedLatencies = "/sched/latencies:seconds"
	gcPauses       = "/sched/pauses/total/gc:seconds"
	goMemTotal     = "/memory/classes/total:bytes"
	runnable       = "/sched/goroutines/runnable:goroutines"
)

// selfSampler measures this process. Each figure is a difference from the
// previous sample, so the first sample carries only the gauges.
type selfSampler struct {
	procDir string // "/proc/self", overridable in tests
	lag     func() time.Duration

	metrics  []metrics.Sample
	prevHist map[string][]uint64
	prevCPU  time.Duration
	prevIO   [2]float64
	prevAt   time.Duration
	started  bool
}

func newSelfSampler(lag func() time.Duration) *selfSampler {
	return &selfSampler{procDir: "/proc/self", lag: lag, prevHist: map[string][]uint64{},
		metrics: []metrics.Sample{{Name: schedLatencies}, {Name: gcPauses}, {Name: goMemTotal}, {Name: runnable}}}
}

func (ss *selfSampler) sample(start time.Time) Sample {
	at := time.Since(start)
	s := Sample{TS: int64(at / time.Second), TimeUS: at.Microseconds(), Source: "client", Kind: "self"}
	s.set(ClientGoroutines, float64(runtime.NumGoroutine()))
	metrics.Read(ss.metrics)
	ss.memory(&s)
	s.set(ClientGOMAXPROCS, float64(runtime.GOMAXPROCS(0)))
	if v := ss.metrics[3].Value; v.Kind() == metrics.KindUint64 {
		s.set(ClientRunnable, float64(v.Uint64()))
	}
	cpu, cpuOK := processCPU()
	io, ioOK := ss.procIO()
	if ss.started {
		wall := (at - ss.prevAt).Seconds()
		if cpuOK && wall > 0 {
			cores := (cpu - ss.prevCPU).Seconds() / wall
			s.set(ClientCPUCores, cores)
			// GOMAXPROCS, not NumCPU: since Go 1.25 it follows a
			// container's CPU limit, and a client capped at 2 of 64
			// cores is saturated at 2 cores' worth, not at 64.
			s.set(ClientCPUPct, 100*cores/float64(runtime.GOMAXPROCS(0)))
		}
		if ioOK && wall > 0 {
			s.set(ClientBytesInPS, (io[0]-ss.prevIO[0])/wall)
			s.set(ClientBytesOutPS, (io[1]-ss.prevIO[1])/wall)
		}
	}
	ss.histograms(&s)
	if ss.lag != nil {
		s.set(ClientPacerLagMS, float64(ss.lag())/float64(time.Millisecond))
	}
	ss.prevCPU, ss.prevIO, ss.prevAt, ss.started = cpu, io, at, true
	return s
}

// memory reads the resident set from /proc; elsewhere it falls back to
// what the Go runtime has mapped, which omits cgo allocations.
func (ss *selfSampler) memory(s *Sample) {
	if b, err := os.ReadFile(ss.procDir + "/statm"); err == nil {
		if f := strings.Fields(string(b)); len(f) > 1 {
			if pages, err := strconv.ParseFloat(f[1], 64); err == nil {
				s.set(ClientRSSMiB, pages*float64(os.Getpagesize())/(1<<20))
				return
			}
		}
	}
	if v := ss.metrics[2].Value; v.Kind() == metrics.KindUint64 {
		s.set(ClientRSSMiB, float64(v.Uint64())/(1<<20))
	}
}

// procIO reads the bytes this process passed to read and write system
// calls (/proc/self/io rchar, wchar): sockets included, so it bounds the
// traffic to and from the target. Linux only.
func (ss *selfSampler) procIO() ([2]float64, bool) {
	b, err := os.ReadFile(ss.procDir + "/io")
	if err != nil {
		return [2]float64{}, false
	}
	var out [2]float64
	found := 0
	for _, line := range strings.Split(string(b), "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		n, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if err != nil {
			continue
		}
		switch k {
		case "rchar":
			out[0] = n
			found++
		case "wchar":
			out[1] = n
			found++
		}
	}
	return out, found == 2
}

// histograms turns the runtime's cumulative histograms into the window's
// scheduling-lag percentile and GC pause total.
func (ss *selfSampler) histograms(s *Sample) {
	for _, m := range ss.metrics[:2] {
		if m.Value.Kind() != metrics.KindFloat64Histogram {
			continue
		}
		h := m.Value.Float64Histogram()
		prev := ss.prevHist[m.Name]
		delta := make([]uint64, len(h.Counts))
		for i, c := range h.Counts {
			delta[i] = c
			if len(prev) == len(h.Counts) {
				delta[i] = c - prev[i]
			}
		}
		ss.prevHist[m.Name] = append(prev[:0], h.Counts...)
		if !ss.started {
			continue
		}
		switch m.Name {
		case schedLatencies:
			if !anyCount(delta) {
				continue // none sampled this window: unknown, not zero
			}
			s.set(ClientSchedLagP99, 1000*bucketQuantile(delta, h.Buckets, 0.99))
			s.set(ClientSchedLagMax, 1000*bucketQuantile(delta, h.Buckets, 1))
		case gcPauses:
			total, worst := bucketSum(delta, h.Buckets)
			s.set(ClientGCPauseMS, 1000*total)
			s.set(ClientGCPauseMaxMS, 1000*worst)
		}
	}
}

func anyCount(counts []uint64) bool {
	return slices.ContainsFunc(counts, func(c uint64) bool { return c > 0 })
}

// bucketQuantile is the upper bound of the bucket holding the q-th
// observation (bucketHolding; the lower bound for the open-ended last
// bucket): an upper estimate, which is the safe side for a saturation
// check. counts are per bucket, bounds the runtime's len(counts)+1
// bucket edges.
func bucketQuantile(counts []uint64, bounds []float64, q float64) float64 {
	cum := make([]float64, len(counts))
	var n uint64
	for i, c := range counts {
		n += c
		cum[i] = float64(n)
	}
	if n == 0 {
		return 0
	}
	return finiteBound(bounds, min(bucketHolding(cum, q*float64(n)), len(counts)-1))
}

// bucketSum estimates the total (bucket midpoints) and the largest value.
func bucketSum(counts []uint64, bounds []float64) (total, worst float64) {
	for i, c := range counts {
		if c == 0 {
			continue
		}
		lo, hi := bounds[i], finiteBound(bounds, i)
		if math.IsInf(lo, -1) {
			lo = 0
		}
		total += float64(c) * (lo + hi) / 2
		worst = hi
	}
	return total, worst
}

// finiteBound is bucket i's upper bound, or its lower one when the upper
// is +Inf.
func finiteBound(bounds []float64, i int) float64 {
	if math.IsInf(bounds[i+1], 1) {
		return max(bounds[i], 0)
	}
	return bounds[i+1]
}
