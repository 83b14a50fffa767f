package experiment

import (
	"cmp"
	"context"
	"fmt"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/inferload/inferload/observe"
	"github.com/inferload/inferload/plan"
	"github.com/inferload/inferload/protocol"
	"github.com/inferload/inferload/record"
	"github.com/inferload/inferload/rundir"
)

// scrapeTargets resolves observe.scrape: the listed endpoints, none for
// "off", or by default the target's scheme and host with /metrics (where
// vLLM, SGLang, TGI and llama.cpp serve their metrics). A templated http
// API's service is no known server, so by default it is not scraped: a
// classifier without /metrics would fail every scrape.
func scrapeTargets(p *plan.Plan) []observe.Target {
	kind := p.Observe.Server
	raw := strings.TrimSpace(p.Observe.Scrape)
	if raw == "off" || (raw == "" && protocol.API(p.Target.API) == protocol.APIHTTP) {
		return nil
	}
	if raw == "" {
		// Each base URL's host (target.url's and its replicas'), once.
		var hosts []string
		for _, base := range p.Target.BaseURLs() {
			u, err := url.Parse(base)
			if err != nil || u.Host == "" {
				continue
			}
			if m := (&url.URL{Scheme: u.Scheme, Host: u.Host, Path: "/metrics"}).String(); !slices.Contains(hosts, m) {
				hosts = append(hosts, m)
			}
		}
		raw = strings.Join(hosts, ",")
	}
	var out []observe.Target
	for _, s := range strings.Split(raw, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, observe.Target{URL: s, Kind: kind})
		}
	}
	return out
}

// checkObserve rejects an unknown server kind or note offset before the
// run starts.
func checkObserve(p *plan.Plan) error {
	if k := p.Observe.Server; k != "" && k != "auto" {
		if _, err := observe.LookupMap(k); err != nil {
			return fmt.Errorf("observe.server: %w", err)
		}
	}
	for at := range p.Observe.Notes {
		if d, err := time.ParseDuration(at); err != nil || d < 0 {
			return fmt.Errorf("observe.notes: %q is not a run-clock offset like 30s", at)
		}
	}
	return nil
}

// telemetry owns the observer and telemetry.jsonl of one run.
type telemetry struct {
	obs *observe.Observer
	out *rundir.JSONLWriter
	err error
}

// startTelemetry starts sampling on the run clock. Samples go to
// telemetry.jsonl, automatic annotations to events.jsonl.
func startTelemetry(ctx context.Context, p *plan.Plan, dir string, start time.Time, events *rundir.JSONLWriter, lag func() time.Duration, onSample func(observe.Sample)) (*telemetry, error) {
	out, err := rundir.NewJSONLWriter(filepath.Join(dir, rundir.Telemetry))
	if err != nil {
		return nil, err
	}
	t := &telemetry{out: out}
	var metrics []string
	for _, m := range strings.Split(p.Observe.Metrics, ",") {
		if m = strings.TrimSpace(m); m != "" {
			metrics = append(metrics, m)
		}
	}
	t.obs = observe.Start(context.WithoutCancel(ctx), start, observe.Config{
		Scrape: scrapeTargets(p), Interval: p.Observe.Interval, Metrics: metrics,
		GPU: p.Observe.GPUs(), Self: true, PacerLag: lag,
		OnSample: func(s observe.Sample) {
			t.keep(out.Write(s))
			if onSample != nil {
				onSample(s)
			}
		},
		OnEvent: func(e record.Event) { t.keep(events.Write(e)) },
	})
	return t, nil
}

func (t *telemetry) keep(err error) {
	if err != nil && t.err == nil {
		t.err = err
	}
}

// stop ends sampling and returns the samples for the summary.
func (t *telemetry) stop() ([]observe.Sample, error) {
	samples := t.obs.Stop()
	t.keep(t.out.Close())
	return samples, t.err
}

// planNotes are the plan's manual annotations, in time order.
func planNotes(p *plan.Plan) []record.Event {
	var out []record.Event
	for at, text := range p.Observe.Notes {
		d, _ := time.ParseDuration(at) // checked by checkObserve
		out = append(out, record.Event{TimeUS: d.Microseconds(), Kind: record.EventNote, Message: text})
	}
	slices.SortFunc(out, func(a, b record.Event) int {
		return cmp.Or(cmp.Compare(a.TimeUS, b.TimeUS), strings.Compare(a.Message, b.Message))
	})
	return out
}
