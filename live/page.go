package live

import (
	"embed"
	"net/http"
	"strings"

	"github.com/inferload/inferload/internal/uplot"
)

// The page and its script and style, served from the binary: the page
// needs no network beyond this server (no CDN).
//
//go:embed assets/live.html assets/live.js assets/live.css assets/launch.html assets/launch.js assets/token.js
var pageFiles embed.FS

// pageCSP lets the page run only its own scripts and talk only to this
// server. uPlot sets inline styles, hence style-src 'unsafe-inline'.
const pageCSP = "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// servePage and serveLauncherPage answer with the live page and the
// launcher's.
var (
	servePage         = pageHandler("assets/live.html")
	serveLauncherPage = pageHandler("assets/launch.html")
)

func pageHandler(name string) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		b, _ := pageFiles.ReadFile(name)
		w.Header().Set("Content-Security-Policy", pageCSP)
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write(b)
	}
}

// assets are the files under /assets/, with their content types.
var assets = map[string]struct{ body, ctype string }{
	"uPlot.iife.min.js": {uplot.JS, "text/javascript; charset=utf-8"},
	"uPlot.min.css":     {uplot.CSS, "text/css; charset=utf-8"},
	"live.js":           {mustAsset("live.js"), "text/javascript; charset=utf-8"},
	"live.css":          {mustAsset("live.css"), "text/css; charset=utf-8"},
	"launch.js":         {mustAsset("launch.js"), "text/javascript; charset=utf-8"},
	"token.js":          {mustAsset("token.js"), "text/javascript; charset=utf-8"},
}

func mustAsset(name string) string {
	b, err := pageFiles.ReadFile("assets/" + name)
	if err != nil {
		panic(err) // embedded at build time: cannot happen
	}
	return string(b)
}

func serveAsset(w http.ResponseWriter, r *http.Request) {
	a, ok := assets[r.PathValue("name")]
	if !ok || strings.Contains(r.PathValue("name"), "/") {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", a.ctype)
	_, _ = w.Write([]byte(a.body))
}
