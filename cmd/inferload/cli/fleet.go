package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/inferload/inferload/analyze"
	"github.com/inferload/inferload/capacity"
	"github.com/inferload/inferload/experiment"
	"github.com/inferload/inferload/plan"
	"github.com/inferload/inferload/record"
	"github.com/inferload/inferload/report"
	"github.com/inferload/inferload/schedule"
	"github.com/inferload/inferload/sim"
	"github.com/inferload/inferload/summary"
)

// fleetPlaceholderURL stands in for a plan's target: fleet contacts no
// server, but a plan is only valid with one.
const fleetPlaceholderURL = "http://127.0.0.1:1/v1"

// fleetFlags are fleet's own options, beside the plan's.
type fleetFlags struct {
	profile, router      string
	peakUsers            int
	peakRate, headroom   float64
	slos                 []string
	maxFailureRate, conf float64
	window, warmup       time.Duration
	maxReplicas          int
	pricePerHour         float64
	format               string
	coldStart, ramp      time.Duration
	scaleFrom            int
	html                 string
	compareRouters       bool
}

func (f *fleetFlags) bind(c *cobra.Command) {
	fs := c.Flags()
	fs.StringVar(&f.profile, "profile", sim.DefaultProfile, "the server to replicate: a simulator preset or a profile YAML file")
	fs.StringVar(&f.router, "router", string(capacity.LeastOutstanding), "how requests are spread: round-robin, least-outstanding, prefix or session (a closed-loop user's conversations on one replica)")
	fs.BoolVar(&f.compareRouters, "compare-routers", false, "also answer behind every router (round-robin, least-outstanding, prefix, session) and compare them: replicas needed, the first SLO's figure, prefix-cache hit share")
	fs.IntVar(&f.peakUsers, "peak-users", 0, "closed loop: plan for this many users (default: the plan's concurrency)")
	fs.Float64Var(&f.peakRate, "peak-rate", 0, "open loop: plan for this many requests/s (default: the plan's rate)")
	fs.Float64Var(&f.headroom, "headroom", 0.2, "plan for the peak times 1+HEADROOM")
	fs.StringArrayVar(&f.slos, "slo", nil, sloFlagHelp)
	fs.Float64Var(&f.maxFailureRate, "max-failure-rate", analyze.DefaultMaxFailureRate, "a passing size's failure rate (refused or unfinished requests) is at most this")
	fs.Float64Var(&f.conf, "confidence", analyze.DefaultConfidence, "confidence at which each SLO's percentile must be shown to hold")
	fs.DurationVar(&f.window, "sim-duration", capacity.DefaultFleetDuration, "simulated (virtual) time measured per fleet size")
	fs.DurationVar(&f.warmup, "sim-warmup", capacity.DefaultFleetWarmup, "simulated time discarded before it")
	fs.IntVar(&f.maxReplicas, "max-replicas", capacity.DefaultFleetMaxReplicas, "the largest fleet to try")
	fs.Float64Var(&f.pricePerHour, "price-per-hour", 0, "one replica's price per hour, for the cost figures")
	fs.StringVar(&f.format, "output", "text", "text or json")
	fs.StringVar(&f.html, "html", "", "also write the answer as a self-contained HTML page (the replica curve, the scale-out) to this file")
	fs.DurationVar(&f.coldStart, "cold-start", 0, "also simulate scaling out to the answer while the load ramps, new replicas taking this long to start (e.g. 90s)")
	fs.IntVar(&f.scaleFrom, "scale-from", 0, "with --cold-start: the replicas serving before the ramp (default half the answer)")
	fs.DurationVar(&f.ramp, "ramp", 2*time.Minute, "with --cold-start: how long the load takes to rise to the planned one")
}

// coldStartOf runs the scale-out scenario to the answer's size.
func (f *fleetFlags) coldStartOf(o capacity.FleetOptions, answer *record.Fleet) error {
	if f.coldStart <= 0 {
		return nil
	}
	from := f.scaleFrom
	if from == 0 {
		from = (answer.Replicas + 1) / 2
	}
	if answer.Replicas < 2 || from >= answer.Replicas {
		return usageErrorf("--cold-start: the answer is %d replicas; scaling out needs --scale-from below it", answer.Replicas)
	}
	cs, err := capacity.SimulateColdStart(o, capacity.ColdStart{From: from, To: answer.Replicas, ColdStart: f.coldStart, Ramp: f.ramp})
	if err != nil {
		return usageError(err)
	}
	answer.ColdStart = cs
	return nil
}

// plan answers behind --router, and behind every router with
// --compare-routers.
func (f *fleetFlags) plan(o capacity.FleetOptions) (*record.Fleet, error) {
	if f.compareRouters {
		return capacity.PlanFleetRouters(o, nil)
	}
	return capacity.PlanFleet(o)
}

// options checks the flags and turns them into the planner's options.
func (f *fleetFlags) options(p *plan.Plan) (capacity.FleetOptions, error) {
	prof, err := loadProfile(f.profile)
	if err != nil {
		return capacity.FleetOptions{}, usageError(err)
	}
	if len(f.slos) == 0 {
		return capacity.FleetOptions{}, usageErrorf("set at least one --slo, e.g. --slo 'ttft.p99<=2s'")
	}
	bounds, err := parseObjectives(f.slos)
	if err != nil {
		return capacity.FleetOptions{}, err
	}
	switch {
	case f.format != "text" && f.format != "json":
		return capacity.FleetOptions{}, usageErrorf("--output %q: want text or json", f.format)
	case f.window <= 0 || f.warmup < 0:
		return capacity.FleetOptions{}, usageErrorf("--sim-duration must be above 0 and --sim-warmup at least 0")
	case f.maxReplicas < 1 || f.peakUsers < 0 || f.peakRate < 0 || f.pricePerHour < 0:
		return capacity.FleetOptions{}, usageErrorf("--max-replicas must be at least 1; --peak-users, --peak-rate and --price-per-hour at least 0")
	}
	w, err := fleetWorkload(p)
	if err != nil {
		return capacity.FleetOptions{}, usageError(err)
	}
	return capacity.FleetOptions{Workload: w, Profile: prof, Router: capacity.Router(f.router), PeakUsers: f.peakUsers,
		PeakRate: f.peakRate, Headroom: f.headroom, SLOs: bounds, Confidence: f.conf, MaxFailureRate: f.maxFailureRate,
		Warmup: f.warmup, Duration: f.window, MaxReplicas: f.maxReplicas, PricePerHour: f.pricePerHour}, nil
}

// fleetWorkload reads what the fleet planner is offered from the plan:
// the requests a run of it sends, its load's shape and its summary's
// aggregate. (capacity reads no plan: plan and summary know the engine,
// which a virtual-time planner must not; and experiment, which reads
// plans, knows no simulator.)
func fleetWorkload(p *plan.Plan) (capacity.FleetWorkload, error) {
	mix, err := experiment.Workload(context.Background(), p)
	if err != nil {
		return capacity.FleetWorkload{}, fmt.Errorf("fleet: workload: %w", err)
	}
	if p.Load.Trace.Path != "" || p.Load.FLOPsPerS > 0 {
		return capacity.FleetWorkload{}, errors.New("fleet: plan a closed loop (load.concurrency) or an open loop at a rate (load.rate); traces and FLOP pacing are not simulated")
	}
	think, err := schedule.ParseThinkTime(p.Load.ThinkTime)
	if err != nil {
		return capacity.FleetWorkload{}, fmt.Errorf("fleet: load.think_time: %w", err)
	}
	return capacity.FleetWorkload{Name: p.Name, Requests: mix, Seed: p.Workload.Seed,
		OpenLoop: p.Load.OpenLoop(), Users: p.Load.Concurrency, Think: think,
		Rate: p.Load.Rate, Arrival: p.Load.ArrivalProcess(), Burstiness: p.Load.Burstiness,
		NewAggregate: func() *record.Aggregate { return summary.NewAggregate(p) }}, nil
}

// fleetPlanFlags fills what a plan needs and fleet does not: a target
// (never contacted) and, without a plan file, the load's kind from the
// peak asked for.
func fleetPlanFlags(cmd *cobra.Command, file string, ff fleetFlags) error {
	set := map[string]string{"url": fleetPlaceholderURL}
	if file == "" && ff.peakUsers > 0 {
		set["concurrency"] = strconv.Itoa(ff.peakUsers)
	}
	if file == "" && ff.peakRate > 0 {
		set["rate"] = strconv.FormatFloat(ff.peakRate, 'g', -1, 64)
	}
	for name, v := range set {
		if cmd.Flags().Changed(name) {
			continue
		}
		if err := cmd.Flags().Set(name, v); err != nil {
			return err
		}
	}
	return nil
}

func newFleetCmd(st *State) *cobra.Command {
	var file string
	var ff fleetFlags
	c := &cobra.Command{
		Use:   "fleet [flags]",
		Short: "Size a fleet: the fewest replicas of a (calibrated) server that meet the SLOs at a peak load",
		Long: `Simulate N replicas of a server profile behind a router, on virtual time, under
the plan's workload (classes, lengths, shared prefixes) and load shape (users
with think time, or an open loop's arrivals) at the peak plus headroom, and find
the smallest N at which every --slo holds, judged as find-capacity judges a
probe (binomial rule at --confidence, failure rate within --max-failure-rate).
No server is contacted; the plan's target is not used.

  inferload fleet -f launch-traffic.yaml --profile a100-7b --peak-users 2000 \
      --slo 'ttft.p99<=2s' --slo 'tpot.p99<=80ms' --price-per-hour 2.5

docs/capacity-planning.md explains the method and its limits.`,
		Args: cobra.NoArgs,
	}
	flags := plan.BindFlags(c.Flags())
	c.Flags().StringVarP(&file, "file", "f", "", "YAML plan file (flags override its fields)")
	ff.bind(c)
	c.RunE = func(cmd *cobra.Command, _ []string) error {
		if err := fleetPlanFlags(cmd, file, ff); err != nil {
			return err
		}
		p, err := plan.Load(file, flags, st.Getenv)
		if err != nil {
			return usageError(err)
		}
		o, err := ff.options(p)
		if err != nil {
			return err
		}
		answer, err := ff.plan(o)
		if err != nil {
			return usageError(err)
		}
		if err := ff.coldStartOf(o, answer); err != nil {
			return err
		}
		if ff.html != "" {
			if err := report.WriteFile(ff.html, func(w io.Writer) error { return report.WriteFleetHTML(w, answer) }); err != nil {
				return err
			}
		}
		if ff.format == "json" {
			enc := json.NewEncoder(st.Stdout)
			enc.SetIndent("", "  ")
			return enc.Encode(answer)
		}
		return report.WriteFleet(st.Stdout, answer)
	}
	return c
}
