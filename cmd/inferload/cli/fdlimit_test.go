package cli

import (
	"bytes"
	"strings"
	"testing"

	"github.com/inferload/inferload/plan"
)

// TestWarnFileLimit: a plan with more users than this process may open
// file descriptors is warned about with the numbers; one within the limit
// is not.
func TestWarnFileLimit(t *testing.T) {
	t.Parallel()
	limit, ok := fileLimit()
	if !ok {
		t.Fatal("no file-descriptor limit on this platform")
	}
	var over, under bytes.Buffer
	p := &plan.Plan{}
	p.Load.Concurrency = int(min(limit, 1<<30)) // limit + headroom > limit
	warnFileLimit(&over, plannedConnections(p))
	if !strings.Contains(over.String(), "ulimit -n") || !strings.Contains(over.String(), "client_resource") {
		t.Errorf("no warning for %d users at a limit of %d: %q", p.Load.Concurrency, limit, over.String())
	}
	p.Load.Concurrency = 1
	warnFileLimit(&under, plannedConnections(p))
	if limit > 1+fdHeadroom && under.Len() > 0 {
		t.Errorf("warned for one user: %q", under.String())
	}
}
