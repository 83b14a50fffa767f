package record

// MaxReplyKept is how many bytes of a graded request's reply (its
// content-carrying JSON) are kept for grading. A reply past it is graded
// on what was kept, so a long answer cut short may read as unparsable;
// a multiple-choice or short JSON answer fits many times over. Ungraded
// requests keep nothing.
const MaxReplyKept = 64 << 10

// Accuracy is how the graded replies fared: summary.json's accuracy, per
// run, class and step; nil (absent) when nothing was graded. Only
// measured successes are graded (a failure has no answer), so accuracy
// and the failure rate never count the same request twice.
type Accuracy struct {
	// Graded counts the measured successful requests whose reply was
	// graded against an expected answer.
	Graded int64 `json:"graded"`
	// Correct counts those that held the expected answer.
	Correct int64 `json:"correct"`
	// Unparsable counts those from which no answer could be read (no
	// choice letter, no JSON, no tool call, tool arguments not JSON).
	Unparsable int64 `json:"unparsable"`
	// Rate is Correct / Graded.
	Rate float64 `json:"rate"`
	// UnparsableRate is Unparsable / Graded.
	UnparsableRate float64 `json:"unparsable_rate"`
}

// accuracyState counts an aggregate's graded replies.
type accuracyState struct{ graded, correct, unparsable int64 }

// add folds in a measured success; an ungraded one changes nothing.
func (s *accuracyState) add(r *Result) {
	if !r.Graded {
		return
	}
	s.graded++
	if r.Correct {
		s.correct++
	}
	if r.Unparsable {
		s.unparsable++
	}
}

// summary is nil when nothing was graded.
func (s *accuracyState) summary() *Accuracy {
	if s.graded == 0 {
		return nil
	}
	g := float64(s.graded)
	return &Accuracy{Graded: s.graded, Correct: s.correct, Unparsable: s.unparsable,
		Rate: float64(s.correct) / g, UnparsableRate: float64(s.unparsable) / g}
}
