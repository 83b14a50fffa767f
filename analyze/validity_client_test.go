package analyze

import (
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
