// Command comparepower prints how often `inferload compare`, one run a
// side at its defaults, catches a planted TTFT P99 slowdown by run length,
// on the truth suite's constructed runs (analyze.ComparePower). It made
// docs/report.md's table "How long a CI run must be".
//
//	go run ./internal/tools/comparepower [-pairs 40] [-seed 3]
package main

import (
	"flag"
	"fmt"

	"github.com/inferload/inferload/analyze"
)

func main() {
	pairs := flag.Int("pairs", 40, "compare pairs per cell")
	seed := flag.Uint64("seed", 3, "seed of the constructed runs")
	flag.Parse()
	slows := []float64{1.10, 1.25, 1.50}
	fmt.Println("| requests per run | 10% slower | 25% slower | 50% slower |")
	fmt.Println("|---|---|---|---|")
	for _, n := range []int{300, 600, 1000, 2000, 4000, 10000} {
		fmt.Printf("| %d |", n)
		for _, slow := range slows {
			fmt.Printf(" %.1f%% |", 100*analyze.ComparePower(*seed, *pairs, n, slow))
		}
		fmt.Println()
	}
}
