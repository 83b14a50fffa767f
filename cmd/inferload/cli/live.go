package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/inferload/inferload/experiment"
	"github.com/inferload/inferload/live"
	"github.com/inferload/inferload/record"
	"github.com/inferload/inferload/report"
)

// liveFlags choose the live exports of a running test.
type liveFlags struct {
	serveMetrics string
	linger       time.Duration
	remoteWrite  string
	rwVersion    string
	rwInterval   time.Duration
	influx       string
	influxEvery  time.Duration
}

func (f *liveFlags) bind(c *cobra.Command) {
	c.Flags().StringVar(&f.serveMetrics, "serve-metrics", "", "serve live Prometheus metrics at http://ADDR/metrics during the run, e.g. 127.0.0.1:9100")
	c.Flags().DurationVar(&f.linger, "serve-metrics-linger", 0, "after the run, keep /metrics up until it is scraped once more, for at most this long")
	c.Flags().StringVar(&f.remoteWrite, "remote-write", "", "push live metrics to this Prometheus remote-write URL during the run, e.g. http://127.0.0.1:9090/api/v1/write")
	c.Flags().StringVar(&f.rwVersion, "remote-write-version", live.RemoteWriteV2, "remote-write protocol: 2.0, or 1.0 for receivers older than Prometheus 3")
	c.Flags().DurationVar(&f.rwInterval, "remote-write-interval", 5*time.Second, "time between remote-write pushes")
	c.Flags().StringVar(&f.influx, "influx-stream", "", "stream the per-second series as InfluxDB line protocol to this write URL during the run (token from $"+influxTokenEnv+")")
	c.Flags().DurationVar(&f.influxEvery, "influx-stream-interval", 5*time.Second, "time between InfluxDB stream posts")
}

// start serves the live metrics (when asked) and hooks them into opts.
// The returned stop waits for the final scrape, bounded by the linger
// time, then closes the server.
func (f *liveFlags) start(st *State, run string, quiet bool, opts *experiment.Options) (stop func() error, err error) {
	stopStream := f.startInfluxStream(st, run, opts)
	if f.serveMetrics == "" && f.remoteWrite == "" {
		return stopStream, nil
	}
	defer func() {
		if err != nil {
			_ = stopStream()
		} else {
			inner := stop
			stop = func() error { return errors.Join(inner(), stopStream()) }
		}
	}()
	m := live.NewMetrics(run, st.Version)
	opts.OnResult = m.Observe
	opts.InFlight = m.SetInFlight
	stopPush, err := f.startRemoteWrite(st, m)
	if err != nil {
		return nil, err
	}
	if f.serveMetrics == "" {
		return stopPush, nil
	}
	stopServe, err := f.startServing(st, m, quiet)
	if err != nil {
		return nil, errors.Join(err, stopPush())
	}
	return func() error { return errors.Join(stopPush(), stopServe()) }, nil
}

// startRemoteWrite pushes m to --remote-write (when set) until the
// returned stop, which sends the final values within 10 s. A receiver
// that failed is a warning, not a failed run: the run's files are whole.
func (f *liveFlags) startRemoteWrite(st *State, m *live.Metrics) (stop func() error, err error) {
	if f.remoteWrite == "" {
		return func() error { return nil }, nil
	}
	w, err := live.StartRemoteWrite(f.remoteWrite, m, live.RemoteWriteOptions{Version: f.rwVersion, Interval: f.rwInterval})
	if err != nil {
		return nil, usageErrorf("--remote-write: %w", err)
	}
	return closeSink(st, w.Close), nil
}

// startServing serves m at --serve-metrics until the returned stop.
func (f *liveFlags) startServing(st *State, m *live.Metrics, quiet bool) (stop func() error, err error) {
	srv, err := live.ServeMetrics(f.serveMetrics, m)
	if err != nil {
		return nil, usageErrorf("--serve-metrics: %w", err)
	}
	if !quiet {
		fmt.Fprintf(st.Stderr, "serving live metrics at http://%s/metrics\n", srv.Addr())
	}
	return func() error {
		if f.linger > 0 {
			ctx, cancel := context.WithTimeout(context.Background(), f.linger)
			if err := srv.AwaitScrape(ctx); err != nil {
				fmt.Fprintf(st.Stderr, "note: %v\n", err)
			}
			cancel()
		}
		return srv.Close()
	}, nil
}

// startInfluxStream streams the series to --influx-stream (when set)
// until the returned stop, which posts the rest within 10 s. A sink that
// failed is a warning, not a failed run: the run's files are whole.
func (f *liveFlags) startInfluxStream(st *State, run string, opts *experiment.Options) (stop func() error) {
	if f.influx == "" {
		return func() error { return nil }
	}
	s := live.StartInfluxStream(f.influx, live.InfluxStreamOptions{Token: st.Getenv(influxTokenEnv), Interval: f.influxEvery})
	var buf bytes.Buffer
	opts.OnWindow = func(started time.Time, w record.Window) {
		buf.Reset()
		if report.NewInfluxSeries(&buf, run, started).Write(&w) == nil {
			s.Add(buf.Bytes())
		}
	}
	return closeSink(st, s.Close)
}

// closeSink is the stop of a live sink: it sends what is left within
// 10 s; a sink that failed is a warning, not a failed run (the run's
// files are whole).
func closeSink(st *State, close func(context.Context) error) func() error {
	return func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := close(ctx); err != nil {
			fmt.Fprintf(st.Stderr, "warning: %v\n", err)
		}
		return nil
	}
}
