package engine

import (
	"github.com/inferload/inferload/protocol"
	"github.com/inferload/inferload/record"
	"github.com/inferload/inferload/workload"
)

// gradeReply grades a successful reply to a request that carried an
// expected answer, from the reply the protocol kept (Request.KeepReply).
// A failed request has no answer to grade: it counts as a failure, not
// as a wrong answer, so accuracy is never mixed with the error rate.
func gradeReply(r *record.Result, a *workload.Answer, tr *protocol.Trace) {
	if a == nil || r.Error != record.ErrNone {
		return
	}
	text, calls := protocol.ReplyAnswer(tr.Reply)
	var tc []workload.ToolCall
	for _, c := range calls {
		tc = append(tc, workload.ToolCall{Name: c.Name, Arguments: c.Arguments})
	}
	v := a.Grade(text, tc)
	r.Graded, r.Correct, r.Unparsable = true, v.Correct, v.Unparsable
}
