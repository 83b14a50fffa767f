package record

import "testing"

func TestAccuracy(t *testing.T) {
	t.Parallel()
	ok := func(correct, unparsable bool) *Result {
		return &Result{Class: "qa", Graded: true, Correct: correct, Unparsable: unparsable, Status: 200, E2EUS: 1000}
	}
	for _, tc := range []struct {
		name string
		recs []*Result
		want *Accuracy
	}{
		// nothing graded: the field is absent
		{"ungraded", []*Result{{Status: 200, E2EUS: 1000}}, nil},
		// 2 of 4 correct, 1 unparsable; the ungraded success does not count
		{"mixed", []*Result{ok(true, false), ok(true, false), ok(false, false), ok(false, true), {Status: 200, E2EUS: 1000}},
			&Accuracy{Graded: 4, Correct: 2, Unparsable: 1, Rate: 0.5, UnparsableRate: 0.25}},
		// warm-up replies are not measured
		{"warmup", []*Result{ok(true, false), {Graded: true, Warmup: true, Status: 200, E2EUS: 1000}},
			&Accuracy{Graded: 1, Correct: 1, Rate: 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := NewAggregate()
			for _, r := range tc.recs {
				a.Add(r)
			}
			s := a.Summary(RunInfo{})
			got := s.Accuracy
			if (got == nil) != (tc.want == nil) || got != nil && *got != *tc.want {
				t.Fatalf("accuracy = %+v, want %+v", got, tc.want)
			}
			if tc.want != nil && (s.Classes["qa"] == nil || *s.Classes["qa"].Accuracy != *tc.want) {
				t.Errorf("class qa accuracy = %+v, want %+v", s.Classes["qa"], tc.want)
			}
		})
	}
}
