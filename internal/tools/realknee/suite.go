package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/inferload/inferload/analyze"
	"github.com/inferload/inferload/experiment"
	"github.com/inferload/inferload/internal/enginetest"
	"github.com/inferload/inferload/plan"
	"github.com/inferload/inferload/record"
	"github.com/inferload/inferload/rundir"
)

// suite is what every configuration is run with.
type suite struct {
	// Mode is record.ModeClosed (users) or record.ModeOpen (requests/s).
	Mode   string
	Reruns int
	// Samples is the measured requests each rerun at the answer (and
	// each probe at the search's lowest load) is sized to expect.
	Samples int
	// Confirm is find-capacity's --confirm: probes at the answer beyond
	// the one that found it (each must pass), with the budget to make
	// them (withConfirm).
	Confirm int
	Dir     string
	Log     io.Writer
}

// outcome is one configuration's figures.
type outcome struct {
	Mode      string
	Config    enginetest.Llama
	Workload  workload
	Agreement enginetest.Agreement
	OneUser   oneUser
	SLO       record.SLO
	Search    analyze.SearchOptions
	Probe     time.Duration
	Capacity  *record.Capacity
	// AtAnswer and Above are the reruns at the answer and at +25%.
	AtAnswer, Above []rerun
	Rerun           time.Duration
	Wall            time.Duration
}

// runConfig starts the configuration's server and runs each step on it.
func (s suite) runConfig(ctx context.Context, c enginetest.Llama) (*outcome, error) {
	start := time.Now()
	srv, err := enginetest.Launch(c)
	if err != nil {
		return nil, err
	}
	defer srv.Stop()
	o := &outcome{Mode: s.Mode, Config: srv.Config, Workload: workloads[c.Model]}
	if err := s.agree(ctx, srv, o); err != nil {
		return nil, err
	}
	o.SLO, o.Search = sloFor(o.OneUser), withConfirm(searchFor(s.Mode, o.OneUser, c.Slots), s.Confirm)
	warmup := warmupFor(o.OneUser)
	o.Probe = warmup + measuredFor(slowestRate(s.Mode, o.OneUser, o.Search), s.Samples)
	if err := s.findCapacity(ctx, srv, o, warmup); err != nil {
		return nil, err
	}
	if !o.Capacity.Found {
		o.Wall = time.Since(start)
		return o, nil
	}
	// Reruns are as long as the probes: at the answer a closed loop sends
	// at least the lowest probe's rate, an open one exactly the answer's.
	o.Rerun = o.Probe
	if s.Mode == record.ModeOpen {
		o.Rerun = warmup + measuredFor(o.Capacity.Load, s.Samples)
	}
	for i := range s.Reruns {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		for _, at := range []struct {
			load float64
			into *[]rerun
		}{{o.Capacity.Load, &o.AtAnswer}, {above(s.Mode, o.Capacity.Load), &o.Above}} {
			r, err := s.rerun(ctx, srv, o, at.load, warmup, uint64(i+1))
			if err != nil {
				return nil, err
			}
			*at.into = append(*at.into, r)
			fmt.Fprintf(s.Log, "  rerun %d at %s: TTFT p90 %.0f ms over %d requests (bound %.0f ms)\n",
				i+1, record.LoadText(at.load, s.Mode), r.TTFTP90MS, r.Samples, o.SLO.TTFTMs)
		}
	}
	o.Wall = time.Since(start)
	return o, nil
}

// agree is the first probe: one user, the measurement checked against
// the server's own timings (enginetest.MeasureAgreement) and the
// one-user figures the SLO and the search are set from.
func (s suite) agree(ctx context.Context, srv *enginetest.LlamaServer, o *outcome) error {
	p, err := s.plan(srv, o, "load: {concurrency: 1, requests: 24}")
	if err != nil {
		return err
	}
	res, err := experiment.Run(ctx, p, experiment.Options{})
	if err != nil {
		return err
	}
	m := res.Summary.Metrics
	o.OneUser = oneUser{TTFTP90MS: m.TTFT.P90, E2EP50MS: m.E2E.P50, RequestsPerS: res.Summary.Throughput.RequestsPerS}
	o.Agreement, err = enginetest.MeasureAgreement(res.Dir, res.Summary)
	fmt.Fprintf(s.Log, "  one user: %+v; agreement %+v\n", o.OneUser, o.Agreement)
	return err
}

// findCapacity runs find-capacity for o's SLO.
func (s suite) findCapacity(ctx context.Context, srv *enginetest.LlamaServer, o *outcome, warmup time.Duration) error {
	p, err := s.plan(srv, o, s.load(o.Search.Low, o.Probe, warmup))
	if err != nil {
		return err
	}
	res, err := experiment.FindCapacity(ctx, p, experiment.Options{}, experiment.CapacityOptions{
		Mode: s.Mode, Search: o.Search, SLOs: []record.SLO{o.SLO}, ProbeDuration: o.Probe})
	if err != nil {
		return err
	}
	o.Capacity = res.Summary.Capacity
	fmt.Fprintf(s.Log, "  find-capacity (%s probes): %s\n", o.Probe, o.Capacity.Reason)
	return nil
}

// load is the plan's load section for one run at load.
func (s suite) load(load float64, d, warmup time.Duration) string {
	if s.Mode == record.ModeClosed {
		return fmt.Sprintf("load: {concurrency: %d, duration: %s, warmup: %s, grace: 10s}", int(load), d, warmup)
	}
	return fmt.Sprintf("load: {rate: %g, duration: %s, warmup: %s, grace: 10s}", load, d, warmup)
}

// rerun runs load for o.Rerun with the workload's seed set to seed (each
// rerun its own arrivals and lengths) and judges it.
func (s suite) rerun(ctx context.Context, srv *enginetest.LlamaServer, o *outcome, load float64, warmup time.Duration, seed uint64) (rerun, error) {
	p, err := s.plan(srv, o, s.load(load, o.Rerun, warmup))
	if err != nil {
		return rerun{}, err
	}
	p.Workload.Seed = seed
	res, err := experiment.Run(ctx, p, experiment.Options{})
	if err != nil {
		return rerun{}, err
	}
	sum := res.Summary
	r := rerun{Load: load, TTFTP90MS: sum.Metrics.TTFT.P90, Samples: sum.Metrics.TTFT.Count, FailureRate: sum.FailureRate,
		Valid: sum.Validity == nil || sum.Validity.Valid}
	r.Confident, err = passesProbeRule(res.Dir, o.SLO, sum.FailureRate)
	return r, err
}

// passesProbeRule is find-capacity's verdict on a run directory: its
// measured records tallied in order against slo (analyze.CountSLOsInOrder, as find-capacity tallies a probe) and judged by
// the probe rule at the default confidence.
func passesProbeRule(dir string, slo record.SLO, failureRate float64) (bool, error) {
	slos, tallies := []record.SLO{slo}, make([]analyze.Tally, 1)
	_, err := rundir.ReadRecords(filepath.Join(dir, rundir.Records), func(r *record.Result) error {
		analyze.CountSLOsInOrder(r, slos, tallies)
		return nil
	})
	rule := analyze.ProbeRule{SLOs: slos, Confidence: analyze.DefaultConfidence, MaxFailureRate: analyze.DefaultMaxFailureRate}
	return err == nil && rule.Judge(failureRate, tallies).Passed, err
}

// plan is the configuration's plan with load, its run directories under
// s.Dir. Only the first runs (the one-user probe and the search) send
// the pre-flight probe: the target is known right by then, and on a
// random-weight model a short probe can draw only tokens that print
// nothing ("empty_output"), which stopped a rerun of the 8-slot server.
func (s suite) plan(srv *enginetest.LlamaServer, o *outcome, load string) (*plan.Plan, error) {
	yaml := fmt.Sprintf("name: %s-%d\ntarget: {url: %s/v1, model: %s, preflight: %t}\nworkload: {input_tokens: \"%d\", output_tokens: \"%d\"}\n%s\n",
		o.Config.Model, o.Config.Slots, srv.URL, o.Config.Model, o.Capacity == nil, o.Workload.Input, o.Workload.Output, load)
	p, err := plan.Parse("realknee.yaml", []byte(yaml))
	if err != nil {
		return nil, err
	}
	p.Output.Dir = s.Dir
	return p, os.MkdirAll(s.Dir, 0o755)
}
