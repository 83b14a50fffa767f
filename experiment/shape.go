package experiment

import (
	"fmt"

	"github.com/inferload/inferload/engine"
	"github.com/inferload/inferload/plan"
)

// shapeBuilder gives cfg the engine Shape of plan p's load. cfg already
// holds the plan's source, renderer and stop conditions, which a shape may
// narrow (a trace brings its own lengths and its own end).
type shapeBuilder func(p *plan.Plan, cfg *engine.Config, files *workloadFiles) error

// loadShapes builds each shape a plan's load can have (plan.Shape, derived
// once by plan.LoadOptions.Shape) into its engine phase, one file each.
// A new shape is its plan fields and plan.Shape, its file here, and its
// row below; the engine runs it as it is (engine.Shape). A staged run's
// stages are shaped by stageShape (shape_stages.go).
var loadShapes = map[plan.Shape]shapeBuilder{
	plan.ShapeUsers:   closedUsers,     // shape_users.go
	plan.ShapeRate:    rateArrivals,    // shape_arrivals.go
	plan.ShapeCompute: computeArrivals, // shape_arrivals.go
	plan.ShapeTrace:   traceReplay,     // shape_trace.go
}

// withShape gives cfg the shape of p's load.
func withShape(p *plan.Plan, cfg *engine.Config, files *workloadFiles) error {
	build, ok := loadShapes[p.Load.Shape()]
	if !ok {
		return fmt.Errorf("load: shape %q has no engine phase", p.Load.Shape())
	}
	return build(p, cfg, files)
}
