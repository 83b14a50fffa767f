package capacity

import (
	"time"

	"github.com/inferload/inferload/sim"
)

// batchModel is all capacity asks of the simulator's batching model: a
// replica takes requests, runs one step at a time on a clock its caller
// owns, and says what it was doing. sim.Engine is the one model, the
// very code the HTTP simulator serves with, so a fleet of one, the
// reference table and a calibration's fit all run the server that
// `inferload sim` runs.
type batchModel interface {
	Add(r sim.Request, now time.Duration) (*sim.Sequence, error)
	HasWork() bool
	Step(now time.Duration) *sim.StepResult
	// Running, Waiting and KVUsage are its state now: sequences in the
	// batch, sequences queued, the share of KV-cache blocks in use.
	Running() int
	Waiting() int
	KVUsage() float64
	Counters() sim.EngineCounters
}

// newBatchModel is one replica of profile p.
func newBatchModel(p sim.Profile) (batchModel, error) {
	e, err := sim.NewEngine(p)
	if err != nil {
		return nil, err
	}
	return e, nil
}
