// Command screenshot saves one PNG per section of an inferload HTML page
// (report.html or a compare page) by opening it in headless Chromium. It
// makes the pictures in docs/ (scripts/screenshots.sh runs it on a fresh
// demo run), so the documentation shows what the code draws today.
//
//	go run ./internal/tools/screenshot -page runs/X/report.html -out docs/img -prefix report-
package main

import (
	"context"
	"flag"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/chromedp/chromedp"
)

func main() {
	page := flag.String("page", "", "HTML page to open (report.html or a compare page)")
	out := flag.String("out", "docs/img", "directory the PNGs are written to")
	prefix := flag.String("prefix", "report-", "file name prefix: <prefix><section id>.png")
	sections := flag.String("sections", "", "comma-separated section ids (default: every section)")
	width := flag.Int("width", 1100, "browser window width in CSS pixels")
	flag.Parse()
	if *page == "" {
		fmt.Fprintln(os.Stderr, "screenshot: -page is required")
		os.Exit(2)
	}
	if err := run(*page, *out, *prefix, *sections, *width); err != nil {
		fmt.Fprintf(os.Stderr, "screenshot: %v\n", err)
		os.Exit(1)
	}
}

func run(page, out, prefix, only string, width int) error {
	abs, err := filepath.Abs(page)
	if err != nil {
		return err
	}
	if _, err := os.Stat(abs); err != nil {
		return err
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	ctx, cancel, err := browser(width)
	if err != nil {
		return err
	}
	defer cancel()
	u := url.URL{Scheme: "file", Path: abs}
	// Charts draw after load; wait until every figure has its canvas.
	err = chromedp.Do(ctx, chromedp.Navigate(u.String()), chromedp.WaitReady("footer"))
	if err == nil {
		_, err = chromedp.Run(ctx, chromedp.Poll[bool](`Array.from(document.querySelectorAll('figure.chart')).every(f => f.querySelector('canvas'))`,
			chromedp.WithPollingTimeout(20*time.Second)))
	}
	if err != nil {
		return fmt.Errorf("open %s: %w", page, err)
	}
	ids, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll('main > section')).map(s => s.id)`))
	if err != nil {
		return fmt.Errorf("list sections of %s: %w", page, err)
	}
	return shoot(ctx, out, prefix, pick(ids, only))
}

// browser starts headless Chromium with a fresh profile and no background
// network.
func browser(width int) (context.Context, context.CancelFunc, error) {
	path := ""
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			path = p
			break
		}
	}
	if path == "" {
		return nil, nil, fmt.Errorf("chromium not found (scripts/install-test-deps.sh installs it)")
	}
	dir, err := os.MkdirTemp("", "screenshot-profile-")
	if err != nil {
		return nil, nil, err
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(path), chromedp.Headless, chromedp.NoSandbox,
		chromedp.Flag("disable-gpu", true), chromedp.Flag("no-first-run", true),
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("hide-scrollbars", true),
		chromedp.UserDataDir(dir), chromedp.WindowSize(width, 900),
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	actx, acancel := chromedp.NewExecAllocator(ctx, opts...)
	tab, tcancel := chromedp.NewContext(actx)
	return tab, func() { tcancel(); acancel(); cancel(); os.RemoveAll(dir) }, nil
}

// pick keeps the ids named in only (all when only is empty), in page order.
func pick(ids []string, only string) []string {
	if only == "" {
		return ids
	}
	want := map[string]bool{}
	for _, id := range strings.Split(only, ",") {
		want[strings.TrimSpace(id)] = true
	}
	var out []string
	for _, id := range ids {
		if want[id] {
			out = append(out, id)
		}
	}
	return out
}

// shoot writes one PNG per section.
func shoot(ctx context.Context, out, prefix string, ids []string) error {
	for _, id := range ids {
		png, err := chromedp.Run(ctx, chromedp.Screenshot("section#"+id))
		if err != nil {
			return fmt.Errorf("section %s: %w", id, err)
		}
		path := filepath.Join(out, prefix+id+".png")
		if err := os.WriteFile(path, png, 0o644); err != nil {
			return err
		}
		fmt.Println(path)
	}
	return nil
}
