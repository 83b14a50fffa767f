package protocol

// noteChannel counts the content event just added (the ContentEvents-th,
// at offset us from Sent) in its channel: reasoning, or else the answer
// (docs/metrics.md#reasoning).
func (t *Trace) noteChannel(reasoning bool, us int64) {
	if !reasoning {
		if t.FirstAnswer == 0 {
			t.FirstAnswer, t.FirstAnswerUS = t.ContentEvents, us
		}
		return
	}
	t.ReasoningEvents++
	if t.FirstReasoning == 0 {
		t.FirstReasoning, t.FirstReasoningUS = t.ContentEvents, us
	}
	if t.FirstAnswer > 0 {
		t.Interleaved = true
	}
}

// reasoning reports whether the chunk's event is a reasoning event: it
// carried reasoning and no answer. An event carrying both is the answer's:
// its arrival is the first answer token's when it is the first. With
// think tags on, the answer text itself may be reasoning (thinkTags).
func (cl *call) reasoning(ck *Chunk) bool {
	if !cl.c.thinkTags || ck.Text == nil {
		return ck.Reasoning && !ck.Content
	}
	r := cl.think.read(ck.Text)
	if r.unopened {
		cl.t.reopen()
	}
	return r.isReasoning()
}

// reopen turns every content event so far into a reasoning event: a
// "</think>" no "<think>" opened says the output began inside a block
// (thinkTags). It applies only while no event was reasoning, the case of
// such a template; otherwise the stream already said where reasoning was.
func (t *Trace) reopen() {
	if t.ReasoningEvents > 0 || t.FirstAnswer == 0 {
		return
	}
	t.ReasoningEvents = t.ContentEvents
	t.FirstReasoning, t.FirstReasoningUS = t.FirstAnswer, t.FirstAnswerUS
	t.FirstAnswer, t.FirstAnswerUS = 0, 0
}
