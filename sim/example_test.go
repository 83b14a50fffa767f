package sim_test

import (
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/inferload/inferload/sim"
)

// Start a simulated server on a free loopback port and send it one request.
func ExampleStart() {
	p, _ := sim.LookupProfile("tiny")
	faults, _ := sim.ParseFaults("none")
	srv, baseURL, err := sim.Start(sim.Config{Profile: p, Faults: faults, Seed: 1}, "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	defer srv.Close()
	resp, err := http.Post(baseURL+"/completions", "application/json",
		strings.NewReader(`{"model":"tiny-sim","prompt":"Say three words","max_tokens":3,"ignore_eos":true}`))
	if err != nil {
		panic(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	fmt.Println(resp.StatusCode, strings.Contains(string(body), `"completion_tokens":3`))
	// Output: 200 true
}

// Faults come from a compact flag string; String gives it back.
func ExampleParseFaults() {
	f, err := sim.ParseFaults("status503=0.05,stall=0.01:5s,reset=0.002")
	if err != nil {
		panic(err)
	}
	fmt.Println(f)
	fmt.Println(f.Pick(0.01).Kind, f.Pick(0.051).Kind, f.Pick(0.9).Kind)
	// Output:
	// status503=0.05,reset=0.002,stall=0.01:5s
	// status reset none
}
