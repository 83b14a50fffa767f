// Command inferload load-tests AI inference services. See README.md.
package main

import (
	"fmt"
	"os"
	"runtime/pprof"

	"github.com/inferload/inferload/cmd/inferload/cli"
)

// profileEnv names a file to write a CPU profile of the whole command to,
// for the client-cost work in BENCHMARKS.md (scripts/client-vs-hey.sh).
const profileEnv = "INFERLOAD_CPUPROFILE"

func main() {
	stop := startProfile(os.Getenv(profileEnv))
	code := cli.Main(cli.OSState())
	stop()
	os.Exit(code)
}

// startProfile starts a CPU profile into path ("" for none) and returns
// what stops it.
func startProfile(path string) func() {
	if path == "" {
		return func() {}
	}
	f, err := os.Create(path)
	if err == nil {
		err = pprof.StartCPUProfile(f)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "inferload: %s: %v\n", profileEnv, err)
		return func() {}
	}
	return func() {
		pprof.StopCPUProfile()
		if err := f.Close(); err != nil {
			fmt.Fprintf(os.Stderr, "inferload: %s: %v\n", profileEnv, err)
		}
	}
}
