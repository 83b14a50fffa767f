package live

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"os"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/prometheus/client_golang/exp/api/remote"
	dto "github.com/prometheus/client_model/go"
)

// Remote-write protocol versions. 2.0 is the current specification
// (Prometheus 3 accepts it); 1.0 is what older receivers, such as
// Debian's Prometheus 2.42, decode: they read a 2.0 body as an empty 1.0
// request and store nothing.
const (
	RemoteWriteV1 = "1.0"
	RemoteWriteV2 = "2.0"
)

// RemoteWriteOptions tune a RemoteWriter; the zero value pushes RW 2.0
// every 5 s.
type RemoteWriteOptions struct {
	// Version is RemoteWriteV2 (default) or RemoteWriteV1.
	Version string
	// Interval is the time between pushes; 0 means 5 s.
	Interval time.Duration
	// Client is the HTTP client; nil means one with a 10 s timeout.
	Client *http.Client
	// Now stamps each push; nil means time.Now.
	Now func() time.Time
	// Job and Instance label every pushed series, as a Prometheus scrape
	// labels what it scrapes, so the Grafana dashboard's job and instance
	// variables select pushed runs too. "" means "inferload" and the host
	// name.
	Job, Instance string
}

// RemoteWriter pushes a Metrics registry to a Prometheus remote-write
// receiver at a fixed interval while a run goes on, and once more at
// Close, so the last seconds arrive too. A failed push is retried a few
// times, then counted and reported at Close: a slow or absent receiver
// never slows the run.
type RemoteWriter struct {
	api     *remote.API
	m       *Metrics
	version string
	now     func() time.Time
	target  []string // job and instance label pairs
	posts   *interval

	mu      sync.Mutex
	pushes  int
	lastErr error
	failed  int
}

// StartRemoteWrite validates rawURL and opts and starts pushing m to
// rawURL, the receiver's full write URL (a URL with no path gets
// Prometheus's /api/v1/write).
func StartRemoteWrite(rawURL string, m *Metrics, opts RemoteWriteOptions) (*RemoteWriter, error) {
	if opts.Version == "" {
		opts.Version = RemoteWriteV2
	}
	if opts.Version != RemoteWriteV1 && opts.Version != RemoteWriteV2 {
		return nil, fmt.Errorf("remote write: version %q: want %s or %s", opts.Version, RemoteWriteV1, RemoteWriteV2)
	}
	if opts.Interval <= 0 {
		opts.Interval = 5 * time.Second
	}
	if opts.Client == nil {
		opts.Client = &http.Client{Timeout: 10 * time.Second}
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Job == "" {
		opts.Job = "inferload"
	}
	if opts.Instance == "" {
		opts.Instance, _ = os.Hostname()
	}
	api, err := newRemoteAPI(rawURL, opts.Client)
	if err != nil {
		return nil, err
	}
	w := &RemoteWriter{api: api, m: m, version: opts.Version, now: opts.Now,
		target: []string{"instance", opts.Instance, "job", opts.Job}}
	w.posts = startInterval(opts.Interval, func() {
		ctx, cancel := context.WithTimeout(context.Background(), opts.Interval)
		defer cancel()
		w.record(w.Push(ctx))
	})
	return w, nil
}

// newRemoteAPI makes the client. remote.NewAPI joins its own path to the
// URL it is given, so the user's path is passed as that path.
func newRemoteAPI(rawURL string, client *http.Client) (*remote.API, error) {
	u, err := url.Parse(rawURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("remote write: %q is not an http(s) URL", rawURL)
	}
	p := u.Path
	if p == "" || p == "/" {
		p = "/api/v1/write"
	}
	u.Path, u.RawPath = "", ""
	api, err := remote.NewAPI(u.String(), remote.WithAPIPath(p), remote.WithAPIHTTPClient(client),
		remote.WithAPIBackoff(remote.BackoffConfig{Min: 100 * time.Millisecond, Max: time.Second, MaxRetries: 3}))
	if err != nil {
		return nil, fmt.Errorf("remote write to %q: %w", rawURL, err)
	}
	return api, nil
}

func (w *RemoteWriter) record(err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.pushes++
	if err != nil {
		w.failed++
		w.lastErr = err
	}
}

// Push gathers the metrics now and sends them in one request.
func (w *RemoteWriter) Push(ctx context.Context) error {
	fams, err := w.m.reg.Gather()
	if err != nil {
		return fmt.Errorf("remote write: gathering metrics: %w", err)
	}
	series := flatten(fams, w.now().UnixMilli(), w.target)
	var msg any
	msgType := remote.WriteV2MessageType
	if w.version == RemoteWriteV1 {
		msg, msgType = encodeV1(series), remote.WriteV1MessageType
	} else {
		msg = encodeV2(series)
	}
	if _, err := w.api.Write(ctx, msgType, msg); err != nil {
		return fmt.Errorf("remote write (%s): %w", w.version, err)
	}
	return nil
}

// Close stops the interval pushes and sends the final values within ctx.
// It reports the final push's error, or how many interval pushes failed.
func (w *RemoteWriter) Close(ctx context.Context) error {
	w.posts.halt()
	err := w.Push(ctx)
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.failed > 0 {
		err = errors.Join(err, fmt.Errorf("remote write: %d of %d pushes failed, last: %w", w.failed, w.pushes, w.lastErr))
	}
	return err
}

// rwSeries is one flattened sample: its sorted label pairs (name first),
// value, timestamp and its family's type and help.
type rwSeries struct {
	labels []string // name, value, name, value… sorted by name
	value  float64
	ts     int64
	typ    dto.MetricType
	help   string
}

// flatten turns gathered families into plain samples the way a scrape
// would: a histogram becomes _bucket{le}, _sum and _count, a summary
// {quantile}, _sum and _count; target's label pairs go on every sample.
func flatten(fams []*dto.MetricFamily, ts int64, target []string) []rwSeries {
	var out []rwSeries
	for _, f := range fams {
		base := f.GetName()
		for _, m := range f.GetMetric() {
			add := func(name string, v float64, extra ...string) {
				lbls := append([]string{"__name__", name}, target...)
				for _, l := range m.GetLabel() {
					lbls = append(lbls, l.GetName(), l.GetValue())
				}
				out = append(out, rwSeries{labels: sortPairs(append(lbls, extra...)), value: v, ts: ts, typ: f.GetType(), help: f.GetHelp()})
			}
			switch f.GetType() {
			case dto.MetricType_COUNTER:
				add(base, m.GetCounter().GetValue())
			case dto.MetricType_GAUGE:
				add(base, m.GetGauge().GetValue())
			case dto.MetricType_UNTYPED:
				add(base, m.GetUntyped().GetValue())
			case dto.MetricType_HISTOGRAM:
				h := m.GetHistogram()
				for _, b := range h.GetBucket() {
					add(base+"_bucket", float64(b.GetCumulativeCount()), "le", formatLE(b.GetUpperBound()))
				}
				add(base+"_bucket", float64(h.GetSampleCount()), "le", "+Inf")
				add(base+"_sum", h.GetSampleSum())
				add(base+"_count", float64(h.GetSampleCount()))
			case dto.MetricType_SUMMARY:
				s := m.GetSummary()
				for _, q := range s.GetQuantile() {
					add(base, q.GetValue(), "quantile", formatLE(q.GetQuantile()))
				}
				add(base+"_sum", s.GetSampleSum())
				add(base+"_count", float64(s.GetSampleCount()))
			}
		}
	}
	return out
}

// formatLE writes a bucket bound as Prometheus's text format does.
func formatLE(v float64) string {
	if math.IsInf(v, 1) {
		return "+Inf"
	}
	return fmt.Sprint(v)
}

// sortPairs sorts name/value pairs by name, as both protocols require.
func sortPairs(kv []string) []string {
	idx := make([]int, len(kv)/2)
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return kv[2*idx[a]] < kv[2*idx[b]] })
	out := make([]string, 0, len(kv))
	for _, i := range idx {
		out = append(out, kv[2*i], kv[2*i+1])
	}
	return slices.Clip(out)
}
