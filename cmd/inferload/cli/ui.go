package cli

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/inferload/inferload/experiment"
	"github.com/inferload/inferload/live"
	"github.com/inferload/inferload/plan"
	"github.com/inferload/inferload/rundir"
)

func newUICmd(st *State) *cobra.Command {
	var listen, out string
	var planDirs []string
	c := &cobra.Command{
		Use:   "ui [flags]",
		Short: "Serve a page to start runs, watch them live and open their reports",
		Long: `Serve a page to compose a run (target URL, model, API, a plan file, load
and duration), start it, watch and steer it live, and open the report.html
of every run directory under --out.

  inferload ui --listen 127.0.0.1:8089 --out runs/

One run goes on at a time. The page needs its token, on loopback too (it
starts runs and reads plan files): from $INFERLOAD_UI_TOKEN, or generated
and printed in the URL to open. Plan files are read only from the plan
directories: the working directory, --out and each --plan-dir. Ctrl-C
stops the run going on and ends the command. See docs/live.md.`,
		Args: cobra.NoArgs,
	}
	c.Flags().StringVar(&listen, "listen", "127.0.0.1:8089", "address to serve the page on")
	c.Flags().StringVar(&out, "out", plan.DefaultOutputDir, "parent directory of the run directories started and listed")
	c.Flags().StringArrayVar(&planDirs, "plan-dir", nil, "a directory the page may read plan files from, besides the working directory and --out (repeatable)")
	c.RunE = func(cmd *cobra.Command, _ []string) error {
		dirs, err := planDirectories(append([]string{".", out}, planDirs...))
		if err != nil {
			return usageErrorf("--plan-dir: %w", err)
		}
		l := &launcher{st: st, out: out, ctx: cmd.Context(), planDirs: dirs}
		srv, err := live.ServeLauncher(listen, l, live.UIOptions{Token: st.Getenv(uiTokenEnv)})
		if err != nil {
			return usageErrorf("--listen: %w", err)
		}
		fmt.Fprintf(st.Stderr, "inferload ui at %s; Ctrl-C ends it\n", uiURL(st, srv))
		fmt.Fprintf(st.Stderr, "plan files are read from %s\n", strings.Join(dirs, ", "))
		ctx, _, release := watchSignals(cmd.Context(), st.Signals)
		defer release()
		<-ctx.Done()
		srv.StopRun()
		l.wait()
		return srv.Close()
	}
	return c
}

// launcher starts the page's runs, one at a time, under out, from plan
// files in planDirs only.
type launcher struct {
	st       *State
	out      string
	ctx      context.Context
	planDirs []string // absolute
	runs     sync.WaitGroup
}

func (l *launcher) wait() { l.runs.Wait() }

// Start turns the request into a plan (the same flags `inferload run`
// takes, over the plan file when one is named) and starts it.
func (l *launcher) Start(req live.RunRequest) (*live.Monitor, live.Control, error) {
	p, err := l.plan(req)
	if err != nil {
		return nil, nil, err
	}
	ctx, cancel := context.WithCancel(l.ctx)
	ctl := &runControl{p: p, steer: experiment.NewSteering(), stop: cancel, abort: make(chan struct{})}
	mon := live.NewMonitor(monitorOptions(p, l.st.clock().Now))
	opts := experiment.Options{Env: experiment.Env{Getenv: l.st.Getenv, ReadFile: l.st.ReadFile}, Clock: l.st.clock(),
		Version: l.st.Version, Abort: ctl.abort, Steering: ctl.steer}
	hookMonitor(&opts, mon, ctl, p)
	l.runs.Add(1)
	go func() {
		defer l.runs.Done()
		defer cancel()
		res, err := experiment.Run(ctx, p, opts)
		f := live.Final{}
		if err != nil {
			f.Error = err.Error()
			fmt.Fprintf(l.st.Stderr, "run failed: %v\n", err)
		} else {
			f.Dir, f.Summary = res.Dir, res.Summary
			f.ReportURL = "../runs/" + url.PathEscape(filepath.Base(res.Dir)) + "/" + rundir.Report
			fmt.Fprintf(l.st.Stderr, "results: %s\n", res.Dir)
		}
		mon.Finish(f)
	}()
	return mon, ctl, nil
}

// plan resolves the request as `inferload run` resolves its flags.
func (l *launcher) plan(req live.RunRequest) (*plan.Plan, error) {
	fs := pflag.NewFlagSet("ui", pflag.ContinueOnError)
	flags := plan.BindFlags(fs)
	args := []string{"--out", l.out}
	add := func(flag, v string) {
		if v = strings.TrimSpace(v); v != "" {
			args = append(args, "--"+flag, v)
		}
	}
	add("url", req.URL)
	add("model", req.Model)
	add("api", req.API)
	add("duration", req.Duration)
	add("input-tokens", req.InputTokens)
	add("output-tokens", req.OutputTokens)
	if req.Level > 0 {
		switch req.Mode {
		case "users", "":
			add("concurrency", strconv.FormatFloat(req.Level, 'f', -1, 64))
		case "rate":
			add("rate", strconv.FormatFloat(req.Level, 'f', -1, 64))
		default:
			return nil, fmt.Errorf("mode %q: one of users, rate", req.Mode)
		}
	}
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	path := strings.TrimSpace(req.Plan)
	var data []byte
	if path != "" {
		var err error
		if path, data, err = readPlanFile(l.planDirs, path); err != nil {
			return nil, err
		}
	}
	p, err := plan.LoadData(path, data, flags, l.st.Getenv)
	if err != nil {
		return nil, withoutFileText(err)
	}
	return p, nil
}

// Runs lists the run directories under out, newest first (their names
// start with the UTC time).
func (l *launcher) Runs() ([]live.RunEntry, error) {
	entries, err := os.ReadDir(l.out)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var runs []live.RunEntry
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		dir := filepath.Join(l.out, e.Name())
		if _, err := os.Stat(filepath.Join(dir, rundir.Events)); err != nil {
			continue // not a run directory
		}
		r := live.RunEntry{Name: e.Name()}
		if _, err := os.Stat(filepath.Join(dir, rundir.Report)); err == nil {
			r.Report = "runs/" + url.PathEscape(e.Name()) + "/" + rundir.Report
		}
		runs = append(runs, r)
	}
	sort.Slice(runs, func(i, j int) bool { return runs[i].Name > runs[j].Name })
	return runs, nil
}

// ReportPath is out/name/report.html for a run directory directly
// under out.
func (l *launcher) ReportPath(name string) (string, error) {
	if name != filepath.Base(name) || strings.HasPrefix(name, ".") {
		return "", fmt.Errorf("%q is not a run directory's name", name)
	}
	return filepath.Join(l.out, name, rundir.Report), nil
}
