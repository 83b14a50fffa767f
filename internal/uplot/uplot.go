// Package uplot holds the chart library every page of inferload draws
// with (report.html and the live UI), vendored from npm uplot 1.6.32
// (MIT, see uPlot.LICENSE) and inlined so the pages work offline.
package uplot

import _ "embed"

var (
	// JS is uPlot's IIFE build; it defines the global uPlot.
	//go:embed uPlot.iife.min.js
	JS string
	// CSS is uPlot's stylesheet.
	//go:embed uPlot.min.css
	CSS string
)
