package experiment

import (
	"fmt"
	"time"

	"github.com/inferload/inferload/engine"
	"github.com/inferload/inferload/schedule"
	"github.com/inferload/inferload/workload"
)

// applySegment narrows an engine phase to the plan's segment (schedule.
// Segment): its share of the users (at every point of a ramp), every N-th
// arrival of the one seeded schedule, its share of a request count and of
// the in-flight cap, and request i numbered as the run-wide request it
// stands for, so its prompts are the single-process run's. Every shape
// experiment builds is one of the engine's two loops, each split here.
func applySegment(cfg *engine.Config, seg schedule.Segment) error {
	if seg.Whole() {
		return nil
	}
	cfg.Source = segmentSource{src: cfg.Source, seg: seg}
	if cfg.Requests > 0 {
		cfg.Requests = seg.Share(cfg.Requests)
	}
	switch s := cfg.Shape.(type) {
	case engine.OpenLoop:
		s.Arrivals = seg.Arrivals(s.Arrivals)
		if s.MaxInFlight > 0 {
			s.MaxInFlight = max(seg.Share(s.MaxInFlight), 1)
		}
		cfg.Shape = s
	case engine.ClosedLoop:
		s.Users = seg.Share(s.Users)
		if active := s.Active; active != nil {
			s.Active = func(elapsed time.Duration) int { return seg.Share(active(elapsed)) }
		}
		cfg.Shape = s
	default:
		return fmt.Errorf("load.segment: a %T load cannot be split into segments", cfg.Shape)
	}
	return nil
}

// segmentSource gives a segment's local request i the run-wide request's
// spec.
type segmentSource struct {
	src engine.Source
	seg schedule.Segment
}

// Spec is the run-wide request seg.Global(i).
func (s segmentSource) Spec(i uint64) workload.Spec { return s.src.Spec(s.seg.Global(i)) }

// Session is the stream of the run-wide user seg.Global(user), so the
// segments' users hold different conversations.
func (s segmentSource) Session(user uint64) workload.Session {
	return sessionOf(s.src, s.seg.Global(user))
}

// segmentedStageBase is the first request number of stage index in a
// segmented run: each segment counts only its own requests, so stage
// bases cannot follow the previous stage's count as they do in one
// process; a fixed 2^32 per stage keeps every request number run-wide
// and the same in every segment.
func segmentedStageBase(index int) uint64 { return uint64(index) << 32 }
