package summary

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/inferload/inferload/analyze"
	"github.com/inferload/inferload/plan"
	"github.com/inferload/inferload/record"
	"github.com/inferload/inferload/rundir"
)

// The kinds of experiment a run directory can hold (experiment.json's kind).
const (
	KindRun      = "run"      // one phase: the plan's duration or request count
	KindStages   = "stages"   // the plan's load.stages
	KindSweep    = "sweep"    // a baseline and one constant step per load, with the knee
	KindCapacity = "capacity" // probes chosen by an SLO capacity search
	KindSoak     = "soak"     // one long phase cut into windows tested for drift
)

// Design is what an experiment asks of its run beyond the plan: which
// verdicts to draw from its steps and by which rules. It is written to
// experiment.json before the run starts, so Assemble, live or rebuilding,
// judges the run by the same rules; what actually ran (each stage's load
// and window) is in events.jsonl.
type Design struct {
	Kind string `json:"kind"`
	// Criteria decide each step's validity (analyze.Judge).
	Criteria analyze.Criteria `json:"criteria"`
	// Knee, when set, runs knee detection over the constant steps of its
	// mode (a sweep).
	Knee *KneeDesign `json:"knee,omitempty"`
	// Capacity, when set, judges each completed step as a probe of an SLO
	// capacity search and gives the answer.
	Capacity *CapacityJudging `json:"capacity,omitempty"`
	// Soak, when set, cuts the measured window into windows tested for drift.
	Soak *SoakDesign `json:"soak,omitempty"`
	// Segments, in a run merged from segments (distributed.Merge), is how many;
	// each gets its own figures in summary.json's segments.
	Segments int `json:"segments,omitempty"`
}

// KneeDesign is a sweep's knee detection.
type KneeDesign struct {
	Options analyze.KneeOptions `json:"options"`
	// Mode is the loop whose steps are compared (a rate sweep's closed-loop
	// baseline is in another unit).
	Mode string `json:"mode"`
}

// CapacityJudging is how a capacity search judges its probes.
type CapacityJudging struct {
	Mode           string       `json:"mode"`
	SLOs           []record.SLO `json:"slos"`
	MaxFailureRate float64      `json:"max_failure_rate"`
	Confidence     float64      `json:"confidence"`
	// Search is how the loads were chosen: its precision and probe budget
	// tell an answer the budget cut short.
	Search analyze.SearchOptions `json:"search"`
	// Sweep: the probes are a sweep's steps, its loads chosen up front
	// (no probe budget); the answer is its highest step at which every
	// objective held.
	Sweep bool `json:"sweep,omitempty"`
	// Baseline is the index of a step that is no probe: a sweep's
	// single-user baseline when it is not one of the sweep's loads (0:
	// none).
	Baseline int `json:"baseline,omitempty"`
}

// staged reports whether the design's records carry a step per stage.
func (d Design) staged() bool { return d.Kind != KindRun && d.Kind != KindSoak }

// WriteDesign writes d as dir's experiment.json (distributed writes a merged
// run's).
func WriteDesign(dir string, d Design) error {
	return rundir.WriteJSON(filepath.Join(dir, rundir.Experiment), d)
}

// ReadDesign reads dir's experiment.json; a run directory without one
// (written before it existed) is a run, or its plan's stages.
func ReadDesign(dir string, p *plan.Plan) (Design, error) {
	path := filepath.Join(dir, rundir.Experiment)
	raw, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return planDesign(p), nil
	}
	if err != nil {
		return Design{}, err
	}
	var d Design
	if err := json.Unmarshal(raw, &d); err != nil {
		return Design{}, fmt.Errorf("%s: %w", path, err)
	}
	switch d.Kind {
	case KindRun, KindStages, KindSweep, KindCapacity, KindSoak:
	default:
		return Design{}, fmt.Errorf("%s: kind %q: want one of run, stages, sweep, capacity, soak", path, d.Kind)
	}
	if d.Soak != nil && d.Soak.Window <= 0 {
		return Design{}, fmt.Errorf("%s: soak window %s: want a positive duration", path, d.Soak.Window)
	}
	return d, nil
}

// planDesign is the design of `inferload run`: its plan's stages, or one phase.
func planDesign(p *plan.Plan) Design {
	if len(p.Load.Stages) > 0 {
		return Design{Kind: KindStages}
	}
	return Design{Kind: KindRun}
}

// soakWindowCount is how many whole windows of length w fit in windowS
// seconds of measured run.
func soakWindowCount(windowS float64, w time.Duration) int {
	return int(windowS * 1e6 / float64(w.Microseconds()))
}
