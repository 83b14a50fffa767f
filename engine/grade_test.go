package engine

import (
	"testing"

	"github.com/inferload/inferload/protocol"
	"github.com/inferload/inferload/record"
	"github.com/inferload/inferload/workload"
)

func TestGradeReply(t *testing.T) {
	t.Parallel()
	choice, err := workload.NewAnswer(workload.GradeChoice, "B", nil)
	if err != nil {
		t.Fatal(err)
	}
	reply := func(s string) []byte {
		return []byte(`{"choices":[{"index":0,"delta":{"content":"` + s + `"}}]}` + "\n")
	}
	for _, tc := range []struct {
		name   string
		answer *workload.Answer
		err    record.ErrorKind
		kept   []byte
		want   record.Result
	}{
		// the right letter
		{"correct", choice, record.ErrNone, reply("(B)"), record.Result{Graded: true, Correct: true}},
		// the wrong letter
		{"wrong", choice, record.ErrNone, reply("C"), record.Result{Graded: true}},
		// no letter at all
		{"unparsable", choice, record.ErrNone, reply("no idea"), record.Result{Graded: true, Unparsable: true}},
		// a failed request is a failure, not a wrong answer
		{"failed", choice, record.ErrHTTP5xx, nil, record.Result{Error: record.ErrHTTP5xx}},
		// an ungraded request stays ungraded
		{"ungraded", nil, record.ErrNone, reply("B"), record.Result{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := record.Result{Error: tc.err}
			gradeReply(&r, tc.answer, &protocol.Trace{Reply: tc.kept})
			if r.Graded != tc.want.Graded || r.Correct != tc.want.Correct || r.Unparsable != tc.want.Unparsable {
				t.Errorf("graded %v correct %v unparsable %v, want %+v", r.Graded, r.Correct, r.Unparsable, tc.want)
			}
		})
	}
}
