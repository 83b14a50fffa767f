package analyze

import (
	"fmt"
	"strings"
	"testing"

	"github.com/inferload/inferload/record"
)

// TestJudgeClientFailures: a step in which the load generator failed
// requests itself is invalid and marks the client saturated, however good
// its figures.
func TestJudgeClientFailures(t *testing.T) {
	t.Parallel()
	step := record.Step{Kind: record.StepConstant, Mode: record.ModeClosed, Target: 4,
		Requests: record.Requests{Succeeded: 500, ClientFailed: 3}, Metrics: record.Metrics{E2E: record.Stats{Count: 500}}}
	step.Validity.AchievedLoad = 4
	if err := Judge(&step, Criteria{}); err != nil {
		t.Fatal(err)
	}
	v := step.Validity
	if v.Valid || !v.ClientSaturated || len(v.Reasons) != 1 || !strings.Contains(v.Reasons[0], "3 requests failed in the load generator itself") {
		t.Errorf("validity %+v: want invalid, client saturated, naming the 3 client failures", v)
	}
	step.Requests.ClientFailed = 0
	if err := Judge(&step, Criteria{}); err != nil || !step.Validity.Valid {
		t.Errorf("without client failures: %+v, %v; want valid", step.Validity, err)
	}
}

// TestLaggingSegment: in a run merged from 10 segments, one that started
// 30 of its 1000 requests late (3%) invalidates the run, although the
// whole's 30 of 10000 (0.3%) passes the late-start rule; segments with
// ordinary scatter do not.
func TestLaggingSegment(t *testing.T) {
	t.Parallel()
	s := &record.Summary{Mode: record.ModeOpen, WindowS: 60,
		Requests: record.Requests{Succeeded: 10000, Late: 30}, Metrics: record.Metrics{E2E: record.Stats{Count: 10000}}}
	for i := range 10 {
		late := int64(0)
		if i == 7 {
			late = 30
		}
		s.Segments = append(s.Segments, record.SegmentFigures{Segment: fmt.Sprintf("%d/10", i),
			Requests: record.Requests{Succeeded: 1000, Late: late}})
	}
	if TooManyLate(30, 10000, Criteria{}) {
		t.Fatal("the whole run's late share fails the rule: the case proves nothing")
	}
	if err := JudgeRun(s, RunLoad{}, Criteria{}); err != nil {
		t.Fatal(err)
	}
	v := s.Validity
	if v.Valid || !strings.Contains(strings.Join(v.Reasons, "; "), "segment 7/10 started 30 of its 1000 requests late") {
		t.Errorf("validity %+v: want invalid for segment 7/10", v)
	}
	if got := LaggingSegments(s, Criteria{}); len(got) != 1 || got[0].Segment != "7/10" {
		t.Errorf("lagging %+v: want only 7/10", got)
	}
}
