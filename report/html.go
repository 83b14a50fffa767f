package report

import (
	"bytes"
	_ "embed"
	"fmt"
	"html/template"
	"io"

	"github.com/inferload/inferload/analyze"
	"github.com/inferload/inferload/internal/uplot"
	"github.com/inferload/inferload/observe"
	"github.com/inferload/inferload/record"
)

// The chart library (package uplot, shared with the live UI) and the
// report's own script and style, inlined so a report opens offline.
var (
	uplotJS  = uplot.JS
	uplotCSS = uplot.CSS
	//go:embed assets/report.js
	reportJS string
	//go:embed assets/report.css
	reportCSS string
)

// maxPoints bounds each time chart: longer series are averaged (rates) or
// maxed (tail latencies) over consecutive windows before drawing. The
// files keep every window; only the picture is coarser.
const maxPoints = 1200

// HTMLInput is what a report is drawn from: a run directory's files, read
// by the caller. Only Summary is required; a section whose data is missing
// is left out.
type HTMLInput struct {
	Summary *record.Summary
	// Env is env.json as decoded into generic JSON values.
	Env    map[string]any
	Series []record.Window
	Events []record.Event
	// Digest holds distributions and heat maps built from the records.
	Digest *Digest
	// Telemetry is telemetry.jsonl: server, GPU and client samples on
	// the run clock.
	Telemetry []observe.Sample
	// Comparison, when set, is this run compared with a baseline
	// (compare.json, written by `inferload compare --embed`).
	Comparison *analyze.Comparison
}

// page is the template's data: sections in display order, and the chart
// specs the page's script draws.
type page struct {
	Title    string
	Subtitle string
	Sections []*section
	Data     pageData
	CSS      template.CSS
	JS       template.JS
}

// pageData is embedded in the page as JSON (html/template escapes it for
// the script context, so no field can close the script element).
type pageData struct {
	Charts []chart      `json:"charts"`
	Marks  []annotation `json:"marks"`
}

// annotation is an event drawn as a vertical line on every time chart.
type annotation struct {
	T     float64 `json:"t"`
	Label string  `json:"label"`
}

// section is one block of the report. Every part is optional; the
// template draws the parts that are there. New kinds of data (per-class
// tables, sweep curves, server timelines) become new sections built by a
// new function in sectionBuilders, without touching the template.
type section struct {
	ID, Title string
	// Help says in one or two sentences how to read the section.
	Help     string
	Cards    []card
	Verdicts []verdict
	Notes    []string
	Tables   []table
	Charts   []chart
}

type card struct{ Label, Value, Detail string }

type verdict struct {
	Passed       bool
	Expr, Detail string
}

type table struct {
	Caption string
	Head    []string
	Rows    [][]string
}

// chart is one drawing; Kind picks the renderer in report.js.
type chart struct {
	ID    string `json:"id"`
	Kind  string `json:"kind"` // "time", "curve", "hist", "heat" or "stack"
	Title string `json:"title"`
	// X is the x values: seconds for "time" and "heat", bin edges in ms
	// for "hist".
	X      []float64 `json:"x"`
	Series []line    `json:"series,omitempty"`
	// Labels name a "stack" chart's bars, one per X (0, 1, 2, ...); the
	// series are the bars' segments, bottom first.
	Labels []string `json:"labels,omitempty"`
	// XLabel names a "curve" chart's x axis (load, input tokens); LogX
	// draws it on a log scale. VMarks are the chart's own vertical lines
	// (the knee), drawn instead of the run's events.
	XLabel string       `json:"xlabel,omitempty"`
	LogX   bool         `json:"logx,omitempty"`
	VMarks []annotation `json:"vmarks,omitempty"`
	// YLabel and Y2Label name the left and (optional) right axes.
	YLabel  string `json:"ylabel,omitempty"`
	Y2Label string `json:"y2label,omitempty"`
	// Heat maps: Y is the latency bin edges in ms (one more than the rows
	// of each column), Cells[i][j] the count of column i, bin j, and
	// WidthS the column width in seconds.
	Y      []float64 `json:"y,omitempty"`
	Cells  [][]int64 `json:"cells,omitempty"`
	WidthS float64   `json:"width_s,omitempty"`
}

// line is one series of a chart.
type line struct {
	Label  string     `json:"label"`
	Values []*float64 `json:"values"` // nil draws a gap
	Right  bool       `json:"right,omitempty"`
	Color  string     `json:"color"`
}

// sectionBuilders make the report's sections in order; each returns nil
// when its data is absent.
var sectionBuilders = []func(*HTMLInput) *section{
	diagnosisSection,
	headlineSection,
	thresholdSection,
	embeddedCompareVerdict,
	embeddedCompareFigures,
	percentileSection,
	breakdownSection,
	serverTimeSection,
	chainSection,
	sessionSection,
	stepsSection,
	soakSection,
	distributionSection,
	inputSection,
	heatSection,
	timelineSection,
	serverTelemetrySection,
	clientTelemetrySection,
	errorSection,
	retrySection,
	eventSection,
	environmentSection,
}

// WriteHTML writes a self-contained report.html: styles, the chart library
// and the data are inlined, so it opens from a file with no network.
func WriteHTML(w io.Writer, in *HTMLInput) error {
	if in == nil || in.Summary == nil {
		return fmt.Errorf("html report: no summary")
	}
	p := buildPage(in)
	var b bytes.Buffer
	if err := pageTemplate.Execute(&b, p); err != nil {
		return fmt.Errorf("html report: %w", err)
	}
	if _, err := w.Write(b.Bytes()); err != nil {
		return fmt.Errorf("write html report: %w", err)
	}
	return nil
}

func buildPage(in *HTMLInput) *page {
	s := in.Summary
	p := &page{
		Title:    "inferload: " + s.Name,
		Subtitle: fmt.Sprintf("%s loop · %.1f s measured · started %s", s.Mode, s.WindowS, s.Started.Format("2006-01-02 15:04:05 MST")),
		CSS:      template.CSS(uplotCSS + reportCSS),
		JS:       template.JS(uplotJS + "\n" + reportJS),
	}
	for _, build := range sectionBuilders {
		if sec := build(in); sec != nil {
			p.Sections = append(p.Sections, sec)
			p.Data.Charts = append(p.Data.Charts, sec.Charts...)
		}
	}
	p.Data.Marks = annotations(in.Events)
	if p.Data.Charts == nil {
		p.Data.Charts = []chart{}
	}
	return p
}

// annotations turns events into chart marks. The label is the event kind
// only: messages (which may quote a target) stay in the escaped table.
func annotations(events []record.Event) []annotation {
	out := []annotation{}
	for _, e := range events {
		if e.Kind == record.EventRunStart {
			continue
		}
		out = append(out, annotation{T: float64(e.TimeUS) / 1e6, Label: string(e.Kind)})
	}
	return out
}
