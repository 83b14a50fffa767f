package experiment

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"maps"
	"net/http"
	"net/url"
	"reflect"
	"time"

	"github.com/inferload/inferload/internal/inputfile"
	"github.com/inferload/inferload/observe"
	"github.com/inferload/inferload/plan"
	"github.com/inferload/inferload/protocol"
)

// Environment is env.json: what ran, where, against what. Fields only
// grow; two runs' files diff line by line because every map is written
// with sorted keys.
type Environment struct {
	Client observe.Host `json:"client"`
	Target TargetEnv    `json:"target"`
	// GPUs are the local GPUs (NVML or nvidia-smi) or the reason there are
	// none; Server GPUs are those a DCGM exporter on a scrape target lists.
	GPUs       observe.GPUState `json:"gpus"`
	ServerGPUs []observe.GPU    `json:"server_gpus,omitempty"`
	// Declared are the fields the user declared (plan env: or --env).
	Declared map[string]string `json:"declared,omitempty"`
	// TraceRun is the name every request's trace id is derived from,
	// record.TraceID(trace_run, id): the run directory's name, or the
	// one all the segments of a distributed run share (Options.TraceRun),
	// so a merged run's ids are recomputed from its records alone.
	TraceRun string `json:"trace_run,omitempty"`
	// Clock is the clock token events were stamped with: "kernel" (the
	// kernel's receive timestamps) or "user" (when the client's read
	// returned); docs/metrics.md#two-clocks-for-arrivals. summary.json's client_reads says
	// which clock each request's events actually got.
	Clock string `json:"clock"`
}

// TargetEnv describes the target as the plan declared it and as it
// described itself.
type TargetEnv struct {
	URL    string         `json:"url"`
	API    string         `json:"api"`
	Model  string         `json:"model,omitempty"`
	Stream bool           `json:"stream"`
	Served observe.Served `json:"served"`
}

// probeTimeout bounds each environment probe, so an unresponsive target or
// exporter delays the start by seconds, not minutes.
const probeTimeout = 3 * time.Second

// environment probes the target's /models, the local GPUs and the DCGM
// labels of the scrape targets. Every probe failure is recorded, never
// returned.
func environment(ctx context.Context, p *plan.Plan, version string, env Env) Environment {
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	client := probeClient(p, env)
	e := Environment{
		Client: observe.HostInfo(version),
		Target: TargetEnv{URL: stripUserinfo(p.Target.URL), API: p.Target.API,
			Model: p.Target.Model, Stream: requestStreams(p, protocol.API(p.Target.API), p.Target.Streams()),
			Served: observe.ProbeNative(ctx, client, p.Target.URL, p.Target.API, p.Target.Model, probeHeaders(p, env))},
		GPUs:     observe.GPUState{Backend: "none", Reason: "GPU sampling is off (observe.gpu: false)"},
		Declared: maps.Clone(p.Env), // redacted below: never the plan's own map
		Clock:    protocol.ClockFor(!p.Target.KernelStamps()),
	}
	if p.Observe.GPUs() {
		e.GPUs = observe.ProbeGPUs(ctx, "")
	}
	for _, t := range scrapeTargets(p) {
		e.ServerGPUs = append(e.ServerGPUs, observe.ScrapeGPUs(ctx, client, t.URL)...)
	}
	if r := planRedactor(p, env); !r.Empty() {
		redactStrings(reflect.ValueOf(&e), r)
	}
	return e
}

// probeClient trusts what the load-test client trusts.
func probeClient(p *plan.Plan, env Env) *http.Client {
	cfg := &tls.Config{InsecureSkipVerify: p.Target.Insecure} //nolint:gosec // the user asked for it
	if p.Target.CAFile != "" {
		if pem, err := env.reader(inputfile.CA)(p.Target.CAFile); err == nil {
			pool, _ := x509.SystemCertPool()
			if pool == nil {
				pool = x509.NewCertPool()
			}
			pool.AppendCertsFromPEM(pem)
			cfg.RootCAs = pool
		}
	}
	return &http.Client{Transport: &http.Transport{TLSClientConfig: cfg, DisableKeepAlives: true}}
}

// probeHeaders are the plan's headers plus the API key.
func probeHeaders(p *plan.Plan, env Env) http.Header {
	h := http.Header{}
	for k, v := range p.Target.Headers {
		h.Set(k, v)
	}
	if key, err := env.apiKey(p); err == nil && key != "" {
		h.Set("Authorization", "Bearer "+key)
	}
	return h
}

// stripUserinfo keeps credentials embedded in a URL out of the run directory.
func stripUserinfo(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "[unparseable URL]"
	}
	u.User = nil
	return u.String()
}
