package schedule_test

import (
	"fmt"
	"log"

	"github.com/inferload/inferload/schedule"
)

// Replaying a three-request trace twice as fast, looping: each Next is the
// intended offset of the next request, and Request gives the lengths the
// trace recorded for it.
func ExampleLoadTrace() {
	tr, err := schedule.LoadTrace("testdata/trace/trace.csv", schedule.TraceOptions{Speed: 2, Loop: true})
	if err != nil {
		log.Fatal(err)
	}
	for i := range 5 {
		at := tr.Next()
		r := tr.Request(uint64(i))
		fmt.Printf("request %d at %v: %d tokens in, %d out\n", i, at, r.InputTokens, r.OutputTokens)
	}
	// Output:
	// request 0 at 0s: 200 tokens in, 20 out
	// request 1 at 250ms: 300 tokens in, 30 out
	// request 2 at 500ms: 100 tokens in, 10 out
	// request 3 at 750ms: 200 tokens in, 20 out
	// request 4 at 1s: 300 tokens in, 30 out
}
