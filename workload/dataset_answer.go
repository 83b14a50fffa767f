package workload

import "encoding/json"

// answerFields are the grading fields a JSONL line (prompt or OpenAI
// chat) may carry beside its prompt. docs/workload.md documents them.
type answerFields struct {
	ExpectAnswer *string         `json:"expect_answer"`
	Grader       string          `json:"grader"`
	Schema       json.RawMessage `json:"schema"`
}

// answer builds the line's Answer, nil when the line asks for no
// grading. A line with expect_answer and no grader is graded exactly; one
// with only a schema is graded against it.
func (f answerFields) answer() (*Answer, error) {
	if f.ExpectAnswer == nil && f.Grader == "" && len(f.Schema) == 0 {
		return nil, nil
	}
	grader := f.Grader
	switch {
	case grader != "":
	case f.ExpectAnswer != nil:
		grader = GradeExact
	default:
		grader = GradeJSONSchema
	}
	var expect string
	if f.ExpectAnswer != nil {
		expect = *f.ExpectAnswer
	}
	return NewAnswer(grader, expect, f.Schema)
}
