package report

import "html/template"

// pageTemplate lays out sections generically: a section shows whichever of
// cards, verdicts, notes, tables and charts it has. html/template escapes
// every value for its context, which is what keeps text from a target
// (model names, error messages) inert.
var pageTemplate = template.Must(template.New("report").Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Title}}</title>
<style>{{.CSS}}</style>
</head>
<body>
<header><h1>{{.Title}}</h1><p class="sub">{{.Subtitle}}</p>
<nav>{{range .Sections}}<a href="#{{.ID}}">{{.Title}}</a>{{end}}</nav></header>
<main>
{{range .Sections}}<section id="{{.ID}}">
<h2>{{.Title}}</h2>
{{with .Help}}<p class="help">{{.}}</p>{{end}}
{{with .Cards}}<div class="cards">{{range .}}<div class="card"><div class="label">{{.Label}}</div><div class="value">{{.Value}}</div>{{with .Detail}}<div class="detail">{{.}}</div>{{end}}</div>{{end}}</div>{{end}}
{{with .Verdicts}}<table class="verdicts"><thead><tr><th>verdict</th><th>threshold</th><th>value</th></tr></thead><tbody>
{{range .}}<tr class="{{if .Passed}}pass{{else}}fail{{end}}"><td>{{if .Passed}}PASS{{else}}FAIL{{end}}</td><td><code>{{.Expr}}</code></td><td>{{.Detail}}</td></tr>
{{end}}</tbody></table>{{end}}
{{with .Notes}}<ul class="notes">{{range .}}<li>{{.}}</li>{{end}}</ul>{{end}}
{{range .Tables}}<table>{{with .Caption}}<caption>{{.}}</caption>{{end}}<thead><tr>{{range .Head}}<th>{{.}}</th>{{end}}</tr></thead><tbody>
{{range .Rows}}<tr>{{range .}}<td>{{.}}</td>{{end}}</tr>
{{end}}</tbody></table>{{end}}
{{with .Charts}}<div class="charts">{{range .}}<figure class="chart" id="{{.ID}}"><figcaption>{{.Title}}</figcaption></figure>{{end}}</div>{{end}}
</section>
{{end}}</main>
<footer>inferload report · charts by uPlot (MIT) · self-contained, no network needed</footer>
<script>const REPORT = {{.Data}};</script>
<script>{{.JS}}</script>
</body>
</html>
`))
