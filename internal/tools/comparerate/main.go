// Command comparerate measures `inferload compare`'s error rates on real
// run directories: reruns of one scenario against one server (A/A, since
// nothing changed between them), and the same runs with a planted
// slowdown (every latency of the current side stretched, its throughput
// cut to match). TRUTH.md's "Compare on a real server" was made by it.
//
//	go run ./internal/tools/comparerate [-slow 1.25] [-batches 8] [-splits 60] DIR
//
// DIR holds the run directories. Every pair of single runs is compared,
// then random splits into k runs a side (k = 3 and 5, as many as DIR
// allows) with repeats.
package main

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"

	"github.com/inferload/inferload/analyze"
	"github.com/inferload/inferload/summary"
)

func main() {
	slow := flag.Float64("slow", 1.25, "the planted slowdown of every latency (throughput divided by it)")
	batches := flag.Int("batches", analyze.DefaultBatches, "batches per run for one run a side (0: no runs check)")
	splits := flag.Int("splits", 60, "random splits per repeat count")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: comparerate [flags] DIR")
		os.Exit(2)
	}
	if err := run(flag.Arg(0), *slow, *batches, *splits); err != nil {
		fmt.Fprintln(os.Stderr, "comparerate:", err)
		os.Exit(1)
	}
}

func run(dir string, slow float64, batches, splits int) error {
	dirs, err := filepath.Glob(filepath.Join(dir, "*"))
	if err != nil {
		return err
	}
	sort.Strings(dirs)
	var runs []*analyze.RunSamples
	for _, d := range dirs {
		rs, err := summary.LoadRunSamples(d)
		if err != nil {
			return err
		}
		runs = append(runs, rs)
	}
	if len(runs) < 2 {
		return fmt.Errorf("%s holds %d runs: want at least 2", dir, len(runs))
	}
	opts := analyze.CompareOptions{Batches: batches, NoRunsCheck: batches == 0}
	var aa, caught, pairs int
	for i := range runs {
		for j := i + 1; j < len(runs); j++ {
			pairs++
			if analyze.Compare(runs[i], runs[j], opts).Regressions > 0 {
				aa++
			}
			if analyze.Compare(runs[i], slowed(runs[j], slow), opts).Regressions > 0 {
				caught++
			}
		}
	}
	fmt.Printf("1 run a side: %d pairs; A/A regressed %s; planted %+.0f%% caught %s\n",
		pairs, share(aa, pairs), (slow-1)*100, share(caught, pairs))
	for _, k := range []int{3, 5} {
		if 2*k > len(runs) {
			break
		}
		rng := rand.New(rand.NewPCG(1, uint64(k)))
		aa, caught = 0, 0
		for range splits {
			idx := rng.Perm(len(runs))
			var base, cur, curSlow []*analyze.RunSamples
			for _, i := range idx[:k] {
				base = append(base, runs[i])
			}
			for _, i := range idx[k : 2*k] {
				cur, curSlow = append(cur, runs[i]), append(curSlow, slowed(runs[i], slow))
			}
			if analyze.CompareRuns(base, cur, opts).Regressions > 0 {
				aa++
			}
			if analyze.CompareRuns(base, curSlow, opts).Regressions > 0 {
				caught++
			}
		}
		fmt.Printf("%d runs a side: %d random splits; A/A regressed %s; planted %+.0f%% caught %s\n",
			k, splits, share(aa, splits), (slow-1)*100, share(caught, splits))
	}
	return nil
}

func share(n, of int) string {
	return fmt.Sprintf("%d (%.1f%%)", n, 100*float64(n)/float64(of))
}

// slowed is rs with every latency times f and its throughput divided by
// f, in the same order (so its batches are the same stretches of run).
func slowed(rs *analyze.RunSamples, f float64) *analyze.RunSamples {
	out := analyze.NewRunSamples(rs.Name + "-slowed")
	out.Overall = rs.Overall.Scaled(f)
	for name, s := range rs.Classes {
		out.Classes[name] = s.Scaled(f)
	}
	for _, v := range rs.OutputTokensPerS {
		out.OutputTokensPerS = append(out.OutputTokensPerS, v/f)
	}
	for _, v := range rs.RequestsPerS {
		out.RequestsPerS = append(out.RequestsPerS, v/f)
	}
	return out
}
