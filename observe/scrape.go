package observe

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// DefaultMaxBody bounds a scrape's size. vLLM with many models and LoRA
// adapters stays under a few MiB; a body past this is a misconfigured
// endpoint, and reading it would cost the load generator memory and CPU.
const DefaultMaxBody = 16 << 20

// errTooLarge marks a scrape cut off at the size limit.
var errTooLarge = errors.New("body exceeds the scrape size limit")

// fetchMetrics GETs one /metrics page and parses it with the Prometheus
// text parser. Every failure (connection, status, size, syntax) is an
// error for the caller to mark as a gap.
func fetchMetrics(ctx context.Context, client *http.Client, url string, maxBody int64) (families, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, fmt.Errorf("scrape %s: %w", url, err)
	}
	// Ask for the text format: the protobuf format needs a different parser
	// and every exporter we support serves text.
	req.Header.Set("Accept", "text/plain;version=0.0.4;q=1,*/*;q=0.1")
	resp, err := client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("scrape %s: %w", url, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 4096))
		return nil, fmt.Errorf("scrape %s: HTTP %s", url, resp.Status)
	}
	body := &limitedReader{r: resp.Body, left: maxBody}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(body)
	if body.over {
		return nil, fmt.Errorf("scrape %s: %w (%d bytes)", url, errTooLarge, maxBody)
	}
	if err != nil {
		return nil, fmt.Errorf("scrape %s: not Prometheus text format: %w", url, err)
	}
	return fams, nil
}

// limitedReader is io.LimitReader that remembers it hit the limit, so a
// truncated body is reported as too large rather than as a syntax error.
type limitedReader struct {
	r    io.Reader
	left int64
	over bool
}

func (l *limitedReader) Read(p []byte) (int, error) {
	if l.left <= 0 {
		l.over = true
		return 0, io.EOF
	}
	if int64(len(p)) > l.left {
		p = p[:l.left]
	}
	n, err := l.r.Read(p)
	l.left -= int64(n)
	return n, err
}

// scraper is one Prometheus endpoint sampled through the run.
type scraper struct {
	url     string
	kind    string // "auto" or a built-in kind
	extra   []string
	client  *http.Client
	maxBody int64

	maps     []Map
	prev     families
	prevAt   time.Duration
	detected bool
}

// sample scrapes once; at is the run-clock time the scrape started.
func (sc *scraper) sample(ctx context.Context, start time.Time) Sample {
	begin := time.Since(start)
	fams, err := fetchMetrics(ctx, sc.client, sc.url, sc.maxBody)
	end := time.Since(start)
	mid := begin + (end-begin)/2
	s := Sample{TS: int64(mid / time.Second), TimeUS: mid.Microseconds(), Source: sc.url,
		LatencyMS: float64(end-begin) / float64(time.Millisecond)}
	if err != nil {
		s.Gap, s.Error = true, err.Error()
		return s
	}
	sc.resolveMaps(fams)
	s.Kind = kindsLabel(sc.maps)
	var elapsed float64
	if sc.prev != nil {
		elapsed = (mid - sc.prevAt).Seconds()
	}
	derive(&s, sc.maps, sc.prev, fams, elapsed)
	for _, name := range sc.extra {
		if f := fams[name]; f != nil {
			v, _ := total(f, [2]string{})
			s.set("metric:"+name, v)
		}
	}
	sc.prev, sc.prevAt = fams, mid
	return s
}

// resolveMaps picks the maps once: the declared kind, or the kinds the
// first successful scrape matched (tried again while nothing matches).
func (sc *scraper) resolveMaps(fams families) {
	if sc.detected {
		return
	}
	kinds := []string{sc.kind}
	if sc.kind == "" || sc.kind == "auto" {
		kinds = Detect(fams)
	}
	sc.maps = sc.maps[:0]
	for _, k := range kinds {
		if m, err := LookupMap(k); err == nil {
			sc.maps = append(sc.maps, m)
		}
	}
	sc.detected = len(sc.maps) > 0
}

func kindsLabel(maps []Map) string {
	s := ""
	for i, m := range maps {
		if i > 0 {
			s += "+"
		}
		s += m.Kind
	}
	return s
}
