package observe

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package when a goroutine outlives its tests: every
// goroutine the package starts is joined before the call that started it
// returns.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
