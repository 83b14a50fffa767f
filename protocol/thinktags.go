package protocol

// thinkTags finds <think>…</think> blocks in a stream's answer text, for
// servers that send a reasoning model's thinking inline in content (no
// reasoning parser): OpenAIOptions.ThinkTags, plan target.think_tags. It
// reads each event's raw JSON string contents once, byte by byte, without
// allocating, and keeps its state across events, so a tag split over two
// chunks ("<thi", "nk>") is still found.
//
// The rule (docs/metrics.md#think-tags):
//   - text inside a block, and the tags themselves, are reasoning; text
//     outside one (whitespace included) is answer;
//   - an event with any answer text is an answer event, else a reasoning
//     event; an event with nothing decided yet (only part of what may be a
//     tag) is the channel it ends in, reasoning while a tag is pending;
//   - a "</think>" with no "<think>" before it in the stream closes a block
//     that began with the output (chat templates that put "<think>" in the
//     prompt, as Qwen3's and DeepSeek-R1's do): the events before it were
//     reasoning, which the caller applies (Trace.reopen);
//   - bytes that began a would-be tag and turn out not to be one count as
//     text of the event that proves it.
//
// JSON escapes are decoded as read (Go servers write "<" as \u003c), so
// the tags are found however the server escaped them.
type thinkTags struct {
	inside  bool // within a block
	seen    bool // a tag has been seen in this stream
	n       int  // bytes of a tag matched so far; 0 when none is pending
	closing bool // the pending tag is "</think>"
}

const (
	thinkOpen  = "<think>"
	thinkClose = "</think>"
)

// thinkRead is what one event's text held.
type thinkRead struct {
	reasoning, answer bool
	// unopened: a "</think>" closed a block no "<think>" opened.
	unopened bool
}

// reset forgets the stream.
func (tt *thinkTags) reset() { *tt = thinkTags{} }

// read scans raw, the contents of a JSON string as sent (escapes not
// decoded), and reports what it held. Malformed escapes (the scanners
// refuse those) read as text.
func (tt *thinkTags) read(raw []byte) thinkRead {
	var r thinkRead
	for i := 0; i < len(raw); {
		c, w := jsonByte(raw[i:])
		i += w
		tt.byte(c, &r)
	}
	if !r.answer && !r.reasoning {
		r.reasoning = tt.inside || tt.n > 0
		r.answer = !r.reasoning
	}
	return r
}

// isReasoning reports whether r makes its event a reasoning event.
func (r thinkRead) isReasoning() bool { return r.reasoning && !r.answer }

// byte advances the matcher by one decoded byte.
func (tt *thinkTags) byte(c byte, r *thinkRead) {
	if tt.n == 0 {
		if c == '<' {
			tt.n = 1
			return
		}
		tt.text(r)
		return
	}
	if tt.n == 1 {
		switch {
		case c == '/' && (tt.inside || !tt.seen):
			tt.closing, tt.n = true, 2
			return
		case c == 't' && !tt.inside:
			tt.closing, tt.n = false, 2
			return
		}
	} else if tag := tt.tag(); c == tag[tt.n] {
		tt.n++
		if tt.n == len(tag) {
			tt.complete(r)
		}
		return
	}
	// Not a tag after all: what was matched is text, and c starts afresh.
	tt.n = 0
	tt.text(r)
	tt.byte(c, r)
}

// tag is the tag being matched.
func (tt *thinkTags) tag() string {
	if tt.closing {
		return thinkClose
	}
	return thinkOpen
}

// complete applies a whole tag.
func (tt *thinkTags) complete(r *thinkRead) {
	if tt.closing && !tt.inside {
		r.unopened = true
	}
	tt.inside, tt.seen, tt.n = !tt.closing, true, 0
	r.reasoning = true
}

// text counts a byte of text in the current channel.
func (tt *thinkTags) text(r *thinkRead) {
	if tt.inside {
		r.reasoning = true
	} else {
		r.answer = true
	}
}

// jsonByte decodes the first character of raw JSON string contents into
// the byte the tags are matched against, and its width in raw: an escaped
// ASCII character is itself (\u003c is '<', \/ is '/'); anything that
// cannot be part of a tag (non-ASCII, a control escape) reads as 0.
func jsonByte(raw []byte) (byte, int) {
	if raw[0] != '\\' || len(raw) < 2 {
		return raw[0], 1
	}
	switch raw[1] {
	case '/', '"', '\\':
		return raw[1], 2
	case 'u':
		if len(raw) < 6 {
			return 0, len(raw)
		}
		v := 0
		for _, h := range raw[2:6] {
			d := hexVal(h)
			if d < 0 {
				return 0, 6
			}
			v = v<<4 | d
		}
		if v >= 0x80 {
			return 0, 6
		}
		return byte(v), 6
	}
	return 0, 2 // \n, \t and the like: text, never part of a tag
}
