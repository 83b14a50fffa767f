package cli

import (
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/inferload/inferload/capacity"
	"github.com/inferload/inferload/sim"
)

// simFlags select and configure a simulated server; `sim` and `demo` share
// them.
type simFlags struct {
	profile string
	faults  string
	seed    uint64
	speedup float64
	otlp    string
	metrics string
}

func (f *simFlags) bind(c *cobra.Command) {
	c.Flags().StringVar(&f.profile, "profile", sim.DefaultProfile, "simulated deployment: a preset name ("+strings.Join(sim.Profiles(), ", ")+") or a profile YAML file")
	c.Flags().StringVar(&f.faults, "faults", "", `injected faults, e.g. "reset=0.01,malformed=0.01,stall=0.02:5s,status503=0.05" (see docs/sim.md)`)
	c.Flags().Uint64Var(&f.seed, "sim-seed", 1, "seed of the simulator's faults, output lengths and text")
	c.Flags().Float64Var(&f.speedup, "speedup", 1, "run the simulated clock this many times faster than real time")
	c.Flags().StringVar(&f.otlp, "otlp-traces-endpoint", "", "export an OTLP span per request, as vLLM's flag does: http://HOST:PORT (OTLP/HTTP protobuf, /v1/traces) or grpc://HOST:PORT")
	c.Flags().StringVar(&f.metrics, "metrics-as", "vllm", "the server whose metric names /metrics exports: "+strings.Join(sim.MetricSets, ", "))
}

// config resolves the flags into a simulator configuration.
func (f *simFlags) config() (sim.Config, error) {
	prof, err := loadProfile(f.profile)
	if err != nil {
		return sim.Config{}, usageError(err)
	}
	cfg := sim.Config{Profile: prof, Seed: f.seed, Speedup: f.speedup, OTLPTracesEndpoint: f.otlp, Metrics: f.metrics}
	if !slices.Contains(sim.MetricSets, f.metrics) {
		return sim.Config{}, usageErrorf("--metrics-as: %q, want %s", f.metrics, strings.Join(sim.MetricSets, ", "))
	}
	if f.faults != "" {
		if cfg.Faults, err = sim.ParseFaults(f.faults); err != nil {
			return sim.Config{}, usageErrorf("--faults: %w", err)
		}
	}
	if f.speedup <= 0 {
		return sim.Config{}, usageErrorf("--speedup: %g must be positive", f.speedup)
	}
	return cfg, nil
}

// loadProfile takes a preset name, else a YAML file.
func loadProfile(name string) (sim.Profile, error) {
	p, err := sim.LookupProfile(name)
	if err == nil {
		return p, nil
	}
	p, ferr := sim.LoadProfile(name)
	if ferr == nil {
		return p, nil
	}
	if errors.Is(ferr, fs.ErrNotExist) {
		return sim.Profile{}, fmt.Errorf("--profile: %w", err) // not a file either: the preset error lists the names
	}
	return sim.Profile{}, fmt.Errorf("--profile %s: %w", name, ferr)
}

func newSimCmd(st *State) *cobra.Command {
	var f simFlags
	var addr string
	var list, reference bool
	c := &cobra.Command{
		Use:   "sim [flags]",
		Short: "Serve a simulated OpenAI-compatible LLM server (continuous batching, KV cache, faults)",
		Long: `Serve a simulated LLM inference server that behaves like a continuous-batching
engine (vLLM-style): waiting queue, running batch, KV cache with preemption,
chunked prefill, prefix caching, vLLM metric names at /metrics, and injectable
faults. Stop it with Ctrl-C. See docs/sim.md.

  inferload sim --addr 127.0.0.1:8000 --profile a100-7b
  inferload sim --profile h100-8b --faults "status503=0.05,reset=0.01"
  inferload sim --reference          # the reference table of docs/sim.md
  inferload sim --list-profiles`,
		Args: cobra.NoArgs,
	}
	f.bind(c)
	c.Flags().StringVar(&addr, "addr", "127.0.0.1:8000", "address to listen on")
	c.Flags().BoolVar(&list, "list-profiles", false, "list the preset profiles and exit")
	c.Flags().BoolVar(&reference, "reference", false, "print the profile's reference table against published figures (virtual time, takes seconds) and exit")
	// "calibrate" is `inferload calibrate`, which fits a profile to runs:
	// the old spelling of --reference still works, with a notice.
	c.Flags().BoolVar(&reference, "calibrate", false, "the old name of --reference")
	_ = c.Flags().MarkDeprecated("calibrate", "use --reference (inferload calibrate fits a profile to measured runs)")
	c.RunE = func(cmd *cobra.Command, _ []string) error {
		if list {
			return listProfiles(st)
		}
		cfg, err := f.config()
		if err != nil {
			return err
		}
		if reference {
			table, err := capacity.Reference(capacity.DefaultReference().WithProfile(cfg.Profile))
			if err != nil {
				return err
			}
			fmt.Fprint(st.Stdout, table.String())
			return nil
		}
		srv, url, err := sim.Start(cfg, addr)
		if err != nil {
			return err
		}
		defer srv.Close()
		fmt.Fprintf(st.Stderr, "simulating %s (model %q) at %s — Ctrl-C to stop\n", cfg.Profile.Name, cfg.Profile.Model, url)
		ctx, _, release := watchSignals(cmd.Context(), st.Signals)
		defer release()
		<-ctx.Done()
		return nil
	}
	return c
}

func listProfiles(st *State) error {
	for _, name := range sim.Profiles() {
		p, err := sim.LookupProfile(name)
		if err != nil {
			return err
		}
		fmt.Fprintf(st.Stdout, "%-12s %s\n", name, p.Description)
	}
	return nil
}
