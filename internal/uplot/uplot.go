// Package uplot holds the chart library every page of inferload draws
// with (report.html and the live UI), vendored from npm uplot 1.6.32
// (MIT, see uPlot.LICENSE) and inlined so the pages work offline.
package uplot

import _ "embed"

var (
	//go:embed uPlot.iife.min.js
	lib string
	//go:embed inferload.js
	helpers string
	// JS is uPlot's IIFE build, which defines the global uPlot, followed
	// by inferload.js, which defines inferloadChart: the event marks and
	// sparse series both pages draw alike.
	JS = lib + "\n;\n" + helpers
	// CSS is uPlot's stylesheet.
	//go:embed uPlot.min.css
	CSS string
)
