package experiment

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/inferload/inferload/analyze"
	"github.com/inferload/inferload/rundir"
	"github.com/inferload/inferload/summary"
)

// A comparison embedded in the current run's report.html survives a
// rebuild of that report: it is kept as compare.json in the run directory.
func TestEmbedComparison(t *testing.T) {
	t.Parallel()
	srv, _ := recordingServer(t)
	dirs := make([]string, 2)
	for k := range dirs {
		p := testPlan(t, fmt.Sprintf("name: run%d\ntarget: {url: %s/v1}\nload: {concurrency: 2, requests: 30}\n", k, srv.URL))
		res, err := Run(context.Background(), p, Options{})
		if err != nil {
			t.Fatal(err)
		}
		dirs[k] = res.Dir
	}
	base, err := summary.LoadRunSamples(dirs[0])
	if err != nil {
		t.Fatal(err)
	}
	cur, err := summary.LoadRunSamples(dirs[1])
	if err != nil {
		t.Fatal(err)
	}
	if err := summary.EmbedComparison(dirs[1], analyze.Compare(base, cur, analyze.CompareOptions{Limits: analyze.DefaultLimits()})); err != nil {
		t.Fatal(err)
	}
	check := func(when string) {
		page, err := os.ReadFile(filepath.Join(dirs[1], rundir.Report))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(page), "Compared with") || !strings.Contains(string(page), "Figures against the baseline") {
			t.Errorf("%s: report.html has no embedded comparison", when)
		}
	}
	check("after embedding")
	if _, err := summary.Rebuild(dirs[1]); err != nil {
		t.Fatal(err)
	}
	check("after a rebuild")
}
