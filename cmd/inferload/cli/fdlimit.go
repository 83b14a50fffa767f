package cli

import (
	"fmt"
	"io"

	"github.com/inferload/inferload/plan"
	"github.com/inferload/inferload/record"
)

// fdHeadroom is what a run needs beyond one descriptor per connection:
// its run-directory files, telemetry scrapes, the live server, the Go
// runtime's own.
const fdHeadroom = 64

// plannedConnections is the most connections the plan's load holds open
// at once: its users (stages included), or an open loop's in-flight cap;
// 0 when unbounded by the plan (an open loop without max_in_flight).
func plannedConnections(p *plan.Plan) int {
	return max(p.Load.MaxUsers(), p.Load.MaxInFlight)
}

// stepConnections is the most connections an experiment's steps hold: its
// highest load in users for a closed loop, else the in-flight cap.
func stepConnections(p *plan.Plan, mode string, highest float64) int {
	if mode == record.ModeClosed {
		return int(highest)
	}
	return p.Load.MaxInFlight
}

// warnFileLimit checks the process's file-descriptor limit against the
// plan's connections before anything is sent. The Go runtime has already
// raised the soft limit to the hard one (Go 1.19+), so what remains is to
// say, with the numbers, that the hard limit is too low: otherwise every
// connection past it fails as client_resource ("too many open files")
// and the test measures this machine, not the target.
func warnFileLimit(w io.Writer, conns int) {
	if conns == 0 {
		return
	}
	limit, ok := fileLimit()
	if !ok || limit >= uint64(conns+fdHeadroom) {
		return
	}
	fmt.Fprintf(w, "warning: %d connections need about %d file descriptors, but this process may open %d (ulimit -n): "+
		"requests past it fail as client_resource, not as the target's errors. Raise the limit (ulimit -n %d) or lower the load.\n",
		conns, conns+fdHeadroom, limit, conns+fdHeadroom)
}
