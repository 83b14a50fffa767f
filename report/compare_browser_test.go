package report

import (
	"path/filepath"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/inferload/inferload/internal/browsertest"
)

// TestCompareHTMLInBrowser opens a compare page from a file in headless
// chromium: no console error, every section there, the model name planted
// in env.json inert, and a screenshot saved as an artifact.
func TestCompareHTMLInBrowser(t *testing.T) {
	dir := browsertest.ArtifactDir(t)
	path := filepath.Join(dir, "compare.html")
	if err := WriteCompareHTMLFile(path, fixedComparison()); err != nil {
		t.Fatal(err)
	}
	ctx, console := openPage(t, path)
	sections, err := chromedp.Run(ctx, chromedp.Evaluate[int]("document.querySelectorAll('main > section').length"))
	if err != nil || sections != 3 {
		t.Errorf("%d sections (%v), want verdict, figures and environment", sections, err)
	}
	pwned, err := chromedp.Run(ctx, chromedp.Evaluate[bool]("document.querySelector('main script, main b') !== null"))
	if err != nil || pwned {
		t.Errorf("planted markup became live (pwned=%v, err=%v)", pwned, err)
	}
	finishPage(t, ctx, console, dir, "compare.png")
}
