package engine

import (
	"context"
	"sync"

	"github.com/inferload/inferload/record"
)

// Shape is the load of one phase, as k6's executors are: what decides
// when each request is sent. The engine sends in one of two ways, and a
// shape runs its phase through one of them with its own parameters:
// ClosedLoop (users, each sending its next request once its last reply
// has ended) or OpenLoop (requests due on a schedule, whatever the
// replies). A new shape is one type with these two methods, in its own
// file, in any package (ExampleShape): the engine needs no change, and
// Config holds one shape, never a choice of fields checked at run time.
type Shape interface {
	// Validate says what keeps the shape from running; New calls it, so
	// a bad shape fails before the phase starts.
	Validate() error
	// Run sends the phase's requests through ph and returns once issuing
	// has stopped: Duration passed or StopIssuing was called, the request
	// budget is spent, or the shape's schedule ran out. Requests still in
	// flight may go on; the engine waits for them (Grace). A shape that
	// sends through neither loop issues nothing.
	Run(ph *Phase)
}

// Phase is a running phase as its Shape sees it: what ClosedLoop.Run and
// OpenLoop.Run send through. Only Engine.Run makes one, and it is valid
// only until the shape's Run returns.
type Phase struct {
	e        *Engine
	issueCtx context.Context // done once issuing stops
	out      chan<- *record.Result
	requests *sync.WaitGroup // every request (or user) in flight
}
