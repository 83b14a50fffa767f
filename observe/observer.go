package observe

import (
	"context"
	"net/http"
	"sync"
	"time"

	"github.com/inferload/inferload/record"
)

// Config says what to observe. The zero value observes only the load
// generator itself.
type Config struct {
	// Scrape lists Prometheus endpoints to sample.
	Scrape []Target
	// Interval between samples of each source (default 1s).
	Interval time.Duration
	// Timeout bounds one scrape (default 90% of Interval), so a slow
	// endpoint costs one gap, never a backlog.
	Timeout time.Duration
	// MaxBody bounds one scrape's size (default DefaultMaxBody).
	MaxBody int64
	// Metrics are extra metric names recorded as-is (summed over label
	// sets) as "metric:<name>" in every scrape's values.
	Metrics []string
	// GPU samples local GPUs through NVML or nvidia-smi.
	GPU bool
	// NvidiaSMI is the nvidia-smi executable (default: found on PATH).
	NvidiaSMI string
	// Self samples the load generator's own process.
	Self bool
	// PacerLag, when set, returns the worst late start of a request since
	// its last call; the engine's pacer owns that figure.
	PacerLag func() time.Duration
	// Client is the HTTP client for scrapes (default: a fresh one, so
	// scrapes never queue behind load-test connections).
	Client *http.Client
	// OnSample receives each sample; calls are serialised.
	OnSample func(Sample)
	// OnEvent receives automatic annotations; calls are serialised.
	OnEvent func(record.Event)
}

// Target is one Prometheus endpoint.
type Target struct {
	URL string
	// Kind is a built-in map (MapKinds) or "auto"/"" to detect it from the
	// first scrape.
	Kind string
}

// Observer samples every configured source until Stop.
type Observer struct {
	cfg    Config
	start  time.Time
	cancel context.CancelFunc
	wg     sync.WaitGroup
	gpu    GPUState
	// gpuBackend is closed by Stop once its sampler has returned.
	gpuBackend gpuBackend

	mu      sync.Mutex
	samples []Sample
	watch   *watcher
}

func (c Config) withDefaults() Config {
	if c.Interval <= 0 {
		c.Interval = time.Second
	}
	if c.Timeout <= 0 {
		c.Timeout = c.Interval * 9 / 10
	}
	if c.MaxBody <= 0 {
		c.MaxBody = DefaultMaxBody
	}
	if c.Client == nil {
		c.Client = &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1}}
	}
	return c
}

// Start begins sampling on the run clock that started at start. It opens
// the GPU backend first (a failure is the "no GPU" state) and returns at
// once; sampling runs until Stop.
func Start(ctx context.Context, start time.Time, cfg Config) *Observer {
	cfg = cfg.withDefaults()
	ctx, cancel := context.WithCancel(ctx)
	o := &Observer{cfg: cfg, start: start, cancel: cancel, watch: newWatcher()}
	for _, t := range cfg.Scrape {
		sc := &scraper{url: t.URL, kind: t.Kind, extra: cfg.Metrics, client: cfg.Client, maxBody: cfg.MaxBody}
		o.loop(ctx, func(ctx context.Context) Sample {
			ctx, cancel := context.WithTimeout(ctx, cfg.Timeout)
			defer cancel()
			return sc.sample(ctx, start)
		})
	}
	o.gpu = GPUState{Backend: "none", Reason: "GPU sampling is off"}
	if cfg.GPU {
		o.startGPU(ctx)
	}
	if cfg.Self {
		ss := newSelfSampler(cfg.PacerLag)
		o.loop(ctx, func(context.Context) Sample { return ss.sample(start) })
	}
	return o
}

// startGPU opens NVML or nvidia-smi and samples it each interval.
func (o *Observer) startGPU(ctx context.Context) {
	b, state := openGPU(ctx, o.cfg.NvidiaSMI)
	o.gpu = state
	if b == nil {
		return
	}
	o.loop(ctx, func(ctx context.Context) Sample {
		begin := time.Since(o.start)
		gpus, err := b.read(ctx)
		end := time.Since(o.start)
		mid := begin + (end-begin)/2
		s := Sample{TS: int64(mid / time.Second), TimeUS: mid.Microseconds(), Source: "gpu", Kind: b.name(),
			LatencyMS: float64(end-begin) / float64(time.Millisecond)}
		if err != nil {
			s.Gap, s.Error = true, err.Error()
			return s
		}
		gpuSample(&s, gpus)
		return s
	})
	o.gpuBackend = b
}

// GPU says which backend sampled local GPUs, or why none did, with the
// GPUs as first read.
func (o *Observer) GPU() GPUState { return o.gpu }

// loop calls take each interval, in the middle of each run-clock second
// (for a 1 s interval) so a sample's midpoint lands in the second it is
// keyed to even when the scrape takes a few hundred milliseconds. A tick
// missed because the previous take overran is skipped, not queued.
func (o *Observer) loop(ctx context.Context, take func(context.Context) Sample) {
	o.wg.Add(1)
	go func() {
		defer o.wg.Done()
		every := o.cfg.Interval
		next := every / 2
		for {
			wait := time.Until(o.start.Add(next))
			t := time.NewTimer(max(wait, 0))
			select {
			case <-ctx.Done():
				t.Stop()
				return
			case <-t.C:
			}
			o.emit(ctx, take(ctx))
			now := time.Since(o.start)
			for next <= now {
				next += every
			}
		}
	}()
}

// emit stores and forwards one sample, unless the run is already over
// (a scrape cut short by Stop is not a gap of the server).
func (o *Observer) emit(ctx context.Context, s Sample) {
	if ctx.Err() != nil {
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	o.samples = append(o.samples, s)
	if o.cfg.OnSample != nil {
		o.cfg.OnSample(s)
	}
	for _, e := range o.watch.see(s) {
		if o.cfg.OnEvent != nil {
			o.cfg.OnEvent(e)
		}
	}
}

// Stop ends sampling, waits for every source, and returns all samples in
// the order they were emitted.
func (o *Observer) Stop() []Sample {
	o.cancel()
	o.wg.Wait()
	if o.gpuBackend != nil {
		o.gpuBackend.close()
		o.gpuBackend = nil
	}
	o.cfg.Client.CloseIdleConnections()
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.samples
}
