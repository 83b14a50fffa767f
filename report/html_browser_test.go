package report

import (
	"context"
	"math"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/inferload/inferload/internal/browsertest"
)

// drawnCharts is JS returning, per chart figure, how many painted
// (non-transparent) pixels its canvas holds; 0 means an empty chart.
const drawnCharts = `Array.from(document.querySelectorAll('figure.chart')).map(function (f) {
  var c = f.querySelector('canvas');
  if (!c) { return f.id + ':0'; }
  var d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data, n = 0;
  for (var i = 3; i < d.length; i += 4) { if (d[i] > 0) { n++; } }
  return f.id + ':' + n;
})`

// openPage opens a file in a fresh headless browser tab, watching its
// console from before the first byte, and waits for the page's footer.
func openPage(t *testing.T, path string) (context.Context, *browsertest.Console) {
	t.Helper()
	ctx := browsertest.Tab(t, browsertest.Path(t), 1280, 900, 60*time.Second)
	console := browsertest.Watch(ctx)
	u := (&url.URL{Scheme: "file", Path: filepath.ToSlash(path)}).String()
	if err := chromedp.Do(ctx, chromedp.Navigate(u), chromedp.WaitReady("footer")); err != nil {
		t.Fatalf("open %s: %v", u, err)
	}
	return ctx, console
}

// finishPage saves a screenshot of the page as dir/name and fails the test
// for every console error, warning or exception the page produced.
func finishPage(t *testing.T, ctx context.Context, console *browsertest.Console, dir, name string) {
	t.Helper()
	shot, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name), shot, 0o644); err != nil {
		t.Fatal(err)
	}
	problems, err := console.Settle(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("console: %s", p)
	}
}

// expectDrawn fails for each of ids that is not among charts, and for any
// chart that drew nothing.
func expectDrawn(t *testing.T, charts []string, ids ...string) {
	t.Helper()
	for _, id := range ids {
		if !slices.ContainsFunc(charts, func(c string) bool { return strings.HasPrefix(c, id+":") }) {
			t.Errorf("chart %s missing: %v", id, charts)
		}
	}
	for _, c := range charts {
		if id, n, _ := strings.Cut(c, ":"); n == "0" || n == "" {
			t.Errorf("chart %s drew nothing", id)
		}
	}
}

// TestHTMLInBrowser opens a report from a file:// URL in headless chromium:
// no console error, every chart drawn, the planted markup inert, and a
// screenshot saved as an artifact.
func TestHTMLInBrowser(t *testing.T) {
	dir := browsertest.ArtifactDir(t)
	path := writeReportFile(t, dir, "report.html", fullInput())
	ctx, console := openPage(t, path)
	charts, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](drawnCharts))
	if err != nil {
		t.Fatal(err)
	}
	if len(charts) != 14 {
		t.Errorf("page has %d charts, want 14 (server time, 3 distributions, 2 heat maps, 2 timelines, 4 server and GPU, 2 client): %v", len(charts), charts)
	}
	checkServerTimeBars(t, ctx)
	expectDrawn(t, charts, "server-time-bars", "tel-0-queue", "tel-0-preempt", "tel-0-srvlat", "tel-0-gpu", "tel-1-cpu", "tel-1-mem")
	checkHeatTicks(t, ctx)
	checkChartHelpers(t, ctx)
	pwned, err := chromedp.Run(ctx, chromedp.Evaluate[bool]("window.pwned !== undefined || document.querySelector('main img, main script') !== null"))
	if err != nil || pwned {
		t.Errorf("planted markup ran or became an element (pwned=%v, err=%v)", pwned, err)
	}
	finishPage(t, ctx, console, dir, "report.png")
}

// checkChartHelpers runs the page's inferloadChart in the browser: three
// labels on marks 10 px apart take three rows (not one on top of
// another), a fifth that fits none of four rows is left unlabelled, a
// label past the right edge starts left of its mark; a value with no
// neighbour makes a series sparse (drawn as points), a run of two does
// not.
func checkChartHelpers(t *testing.T, ctx context.Context) {
	t.Helper()
	type placed struct {
		X   float64 `json:"x"`
		Row int     `json:"row"`
	}
	got, err := chromedp.Run(ctx, chromedp.Evaluate[[]placed](
		`inferloadChart.layout([{x: 100, w: 60}, {x: 110, w: 60}, {x: 120, w: 60}, {x: 130, w: 60}, {x: 140, w: 60}, {x: 400, w: 60}, {x: 980, w: 60}], 4, 1000, 6)`))
	if err != nil {
		t.Fatal(err)
	}
	want := []placed{{103, 0}, {113, 1}, {123, 2}, {133, 3}, {143, -1}, {403, 0}, {917, 0}}
	if !slices.Equal(got, want) {
		t.Errorf("label layout %v, want %v", got, want)
	}
	sparse, err := chromedp.Run(ctx, chromedp.Evaluate[[]bool](
		`[inferloadChart.sparse([5, null, 7, null]), inferloadChart.sparse([null, 5, 6, null, 7, 8]), inferloadChart.sparse([])]`))
	if err != nil || !slices.Equal(sparse, []bool{true, false, false}) {
		t.Errorf("sparse = %v (%v), want [true false false]", sparse, err)
	}
}

// TestBrowserCheckCatchesErrors proves the console watch and the empty-chart
// check can fail: a page that throws and has a blank chart is caught.
func TestBrowserCheckCatchesErrors(t *testing.T) {
	path := filepath.Join(t.TempDir(), "broken.html")
	page := `<!DOCTYPE html><html><body><figure class="chart" id="blank"><canvas width="50" height="50"></canvas></figure>
<script>console.error("boom"); null.x;</script><footer></footer></body></html>`
	if err := os.WriteFile(path, []byte(page), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, console := openPage(t, path)
	charts, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](drawnCharts))
	if err != nil || len(charts) != 1 || charts[0] != "blank:0" {
		t.Errorf("charts = %v, %v; want [blank:0]", charts, err)
	}
	problems, err := console.Settle(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(problems) < 2 {
		t.Errorf("console problems = %q; want the console.error and the exception", problems)
	}
}

// TestStagedHTMLInBrowser opens a staged run's report: the step curves
// (with the knee marks and KV cache overlay), the TTFT against input
// length chart and the soak windows are drawn, with no console error.
func TestStagedHTMLInBrowser(t *testing.T) {
	dir := browsertest.ArtifactDir(t)
	path := writeReportFile(t, dir, "report-staged.html", stagedInput())
	ctx, console := openPage(t, path)
	charts, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](drawnCharts))
	if err != nil {
		t.Fatal(err)
	}
	expectDrawn(t, charts, "steps-throughput", "steps-latency", "input-ttft", "soak-windows")
	finishPage(t, ctx, console, dir, "report-staged.png")
}

// heatTicks is what the page's heat maps put on their latency axes.
type heatTicks struct {
	Range  []float64 `json:"range"`
	Ticks  []float64 `json:"ticks"`
	Top    float64   `json:"top"`
	Bottom float64   `json:"bottom"`
}

// checkHeatTicks: every heat map labels its latency axis with round values
// (1, 2 or 5 × 10^k ms, never the 3981/5981/7981 of uPlot's own log ticks
// on a narrow range), its axis spans every band, and a label sits at or
// above the top band's upper edge, so no band is left unlabelled.
func checkHeatTicks(t *testing.T, ctx context.Context) {
	t.Helper()
	got, err := chromedp.Run(ctx, chromedp.Evaluate[map[string]heatTicks]("window.inferloadHeatTicks"))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 {
		t.Errorf("heat map ticks for %d charts, want 2: %v", len(got), got)
	}
	for id, h := range got {
		if len(h.Ticks) < 2 || h.Range[0] > h.Bottom || h.Range[1] < h.Top || h.Ticks[len(h.Ticks)-1] < h.Top {
			t.Errorf("%s: ticks %v over range %v do not label bands %v to %v", id, h.Ticks, h.Range, h.Bottom, h.Top)
		}
		for _, v := range h.Ticks {
			m := v / math.Pow(10, math.Floor(math.Log10(v)+1e-9))
			if math.Abs(m-1) > 1e-6 && math.Abs(m-2) > 1e-6 && math.Abs(m-5) > 1e-6 {
				t.Errorf("%s: tick %v is not 1, 2 or 5 × 10^k", id, v)
			}
		}
	}
}

// checkServerTimeBars: the "Where the time went" chart paints a bar per
// class and percentile, each stacking the four phases in their colours
// (sampled at the bar's centre column), the tallest bar (the planted
// class's p99) reaching near the top of the plot.
func checkServerTimeBars(t *testing.T, ctx context.Context) {
	t.Helper()
	const js = `(function () {
  var f = document.getElementById('server-time-bars'), c = f && f.querySelector('canvas');
  if (!c) { return []; }
  var copy = document.createElement('canvas');
  copy.width = c.width; copy.height = c.height;
  var cx = copy.getContext('2d', { willReadFrequently: true });
  cx.drawImage(c, 0, 0);
  var d = cx.getImageData(0, 0, c.width, c.height).data, seen = {};
  for (var i = 0; i < d.length; i += 4) {
    var k = d[i] + ',' + d[i + 1] + ',' + d[i + 2];
    if (d[i + 3] === 255) { seen[k] = (seen[k] || 0) + 1; }
  }
  return ['192,57,43', '46,134,193', '39,174,96', '142,142,142'].map(function (k) { return seen[k] || 0; });
})()`
	got, err := chromedp.Run(ctx, chromedp.Evaluate[[]int](js))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 4 {
		t.Fatalf("server-time chart: no canvas (%v)", got)
	}
	for i, n := range got {
		if n < 50 {
			t.Errorf("server-time chart: phase %d (%s) painted %d pixels, want a visible segment in the bars", i, serverPhases[i].label, n)
		}
	}
}
