package protocol

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/bits"
)

// Chunk is what one OpenAI-style JSON object says about generation: a
// streamed chat.completion.chunk or text_completion chunk, or a whole
// non-streaming reply (choices[].message is read like choices[].delta).
//
// Byte slices alias the scanned data and are raw JSON string contents
// (escapes not decoded).
type Chunk struct {
	// Content is true when some choice carries generated output: a non-empty
	// delta.content / message.content string, a non-empty completions
	// "text", or a non-empty tool_calls array. A role-only chunk
	// ("content": null or "") and a usage-only chunk ("choices": []) are not
	// content.
	Content bool
	// ToolCalls is true when some choice carries a non-empty tool_calls
	// array (the reply asks for a function call).
	ToolCalls bool
	// Reasoning is true when some choice carries a non-empty
	// reasoning_content or reasoning string.
	Reasoning bool
	// Text is the raw contents of the last non-empty answer string read
	// (delta.content, message.content or a completions "text"), nil when
	// there was none: what <think> tags are looked for in (thinkTags).
	Text []byte
	// FinishReason is the last non-null finish_reason of the choices, nil
	// when there was none.
	FinishReason []byte

	// Usage is true when a usage object (not null) was present.
	Usage bool
	// PromptTokens and CompletionTokens are usage.prompt_tokens and
	// usage.completion_tokens; a count that is not a plain non-negative
	// integer reads as 0.
	PromptTokens     int
	CompletionTokens int
	// ReasoningTokens is usage.completion_tokens_details.reasoning_tokens.
	ReasoningTokens int

	// CachedTokens is usage.prompt_tokens_details.cached_tokens (vLLM and
	// llama.cpp): prompt tokens the server's prefix cache served.
	CachedTokens int
	// Timings is the llama.cpp-style "timings" object of a final chunk, the
	// server's own per-request durations; Timings.Present is false without one.
	Timings ServerTimings

	// Error is true when the object reports a failure: a top-level "error"
	// object or string, or vLLM's older {"object": "error", "message": ...}.
	Error bool
	// ErrorMessage is the error's message string, nil when it had none.
	ErrorMessage []byte
}

// ScanChunk reads data, one JSON object, into c without allocating. Keys are
// matched as encoding/json would (escapes decoded, last duplicate wins), but
// only the fields Chunk describes are interpreted; everything else is
// skipped while still being checked for well-formedness. Malformed JSON, a
// value that is not an object, or trailing bytes give an error; ScanChunk
// never panics and runs in time linear in len(data).
func ScanChunk(data []byte, c *Chunk) error {
	s := scanner{b: data}
	return s.chunk(c)
}

// chunk is ScanChunk on s's data.
func (s *scanner) chunk(c *Chunk) error {
	*c = Chunk{}
	s.ws()
	if s.peek() != '{' {
		return s.fail("chunk is not a JSON object")
	}
	if err := s.top(c); err != nil {
		return err
	}
	s.ws()
	if s.i != len(s.b) {
		return s.fail("trailing data after the object")
	}
	return nil
}

// maxDepth matches encoding/json's nesting limit, so any document it
// accepts is accepted here too.
const maxDepth = 10000

// scanner walks a JSON document by hand: the per-event path of a stream
// must not allocate, which rules out encoding/json.
type scanner struct {
	b     []byte
	i     int
	depth int
	kb    [64]byte // room to decode an escaped key
	// outputs counts the values that made a chunk carry output (non-empty
	// content, reasoning or text strings, non-empty tool_calls); out is the
	// raw contents' span of the last such string. chunkShape learns from
	// a chunk whose output was one string.
	outputs int
	out     [2]int
}

// SyntaxError describes malformed JSON found by ScanChunk.
type SyntaxError struct {
	Offset int    // byte offset of the problem
	Msg    string // what was wrong
}

// Error implements error.
func (e *SyntaxError) Error() string {
	return fmt.Sprintf("malformed JSON at byte %d: %s", e.Offset, e.Msg)
}

func (s *scanner) fail(msg string) error {
	return &SyntaxError{Offset: s.i, Msg: msg}
}

// ws skips JSON whitespace. Compact JSON has none, so the first test
// usually returns.
func (s *scanner) ws() {
	if s.i < len(s.b) && s.b[s.i] > ' ' {
		return
	}
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// peek returns the next byte, or 0 at the end.
func (s *scanner) peek() byte {
	if s.i < len(s.b) {
		return s.b[s.i]
	}
	return 0
}

// enter consumes open ('{' or '[') and whitespace. It reports whether the
// container has members, consuming close when it is empty.
func (s *scanner) enter(open, close byte) (bool, error) {
	if s.peek() != open {
		return false, s.fail("expected " + string(rune(open)))
	}
	s.depth++
	if s.depth > maxDepth {
		return false, s.fail("nesting too deep")
	}
	s.i++
	s.ws()
	if s.peek() == close {
		s.i++
		s.depth--
		return false, nil
	}
	return true, nil
}

// next runs after a member: it reports whether another follows (a comma),
// or consumes close.
func (s *scanner) next(close byte) (bool, error) {
	s.ws()
	switch s.peek() {
	case ',':
		s.i++
		s.ws()
		return true, nil
	case close:
		s.i++
		s.depth--
		return false, nil
	}
	return false, s.fail("expected ',' or " + string(rune(close)))
}

// key reads a member name and its colon, leaving s at the value.
func (s *scanner) key() (name []byte, escaped bool, err error) {
	name, escaped, err = s.str()
	if err != nil {
		return nil, false, err
	}
	s.ws()
	if s.peek() != ':' {
		return nil, false, s.fail("expected ':'")
	}
	s.i++
	s.ws()
	return name, escaped, nil
}

// str reads a string, returning its raw contents and whether it holds
// escapes. Chunks are mostly short strings without escapes, for which a
// bytes.IndexByte call costs more than the search, so str first looks for
// the closing quote or a backslash eight bytes at a time in a register
// (about 12% off a whole chunk here); escapedStr handles the rest.
func (s *scanner) str() ([]byte, bool, error) {
	if s.peek() != '"' {
		return nil, false, s.fail("expected a string")
	}
	start := s.i + 1
	j := start
	for ; j+8 <= len(s.b); j += 8 {
		x := binary.LittleEndian.Uint64(s.b[j:])
		if m := hasByte(x, '"') | hasByte(x, '\\'); m != 0 {
			j += bits.TrailingZeros64(m) >> 3
			break
		}
	}
	for j < len(s.b) && s.b[j] != '"' && s.b[j] != '\\' {
		j++
	}
	if j < len(s.b) && s.b[j] == '"' {
		s.i = j + 1
		return s.b[start:j], false, nil
	}
	return s.escapedStr(start, j)
}

// hasByte sets the high bit of the first byte of x that equals c (bytes
// after it may be marked too; callers only use the first mark).
func hasByte(x uint64, c byte) uint64 {
	const lo, hi = 0x0101010101010101, 0x8080808080808080
	y := x ^ (lo * uint64(c))
	return (y - lo) &^ y & hi
}

// escapedStr reads the rest of a string that starts at start and has its
// first backslash (or its end) at j. It finds the closing quote with
// bytes.IndexByte and remembers it across escapes, so a string full of
// escapes is still read in linear time.
func (s *scanner) escapedStr(start, j int) ([]byte, bool, error) {
	quote := -1
	for {
		if quote < j {
			k := bytes.IndexByte(s.b[j:], '"')
			if k < 0 {
				s.i = len(s.b)
				return nil, false, s.fail("unterminated string")
			}
			quote = j + k
		}
		bs := bytes.IndexByte(s.b[j:quote], '\\')
		if bs < 0 {
			s.i = quote + 1
			return s.b[start:quote], true, nil
		}
		n, err := s.escapeLen(j + bs)
		if err != nil {
			return nil, false, err
		}
		j += bs + n
	}
}

// escapeLen checks the escape sequence starting at the backslash at p and
// returns its length.
func (s *scanner) escapeLen(p int) (int, error) {
	if p+1 >= len(s.b) {
		s.i = p
		return 0, s.fail("unterminated escape")
	}
	switch s.b[p+1] {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		return 2, nil
	case 'u':
		if p+6 > len(s.b) {
			s.i = p
			return 0, s.fail("short \\u escape")
		}
		for _, h := range s.b[p+2 : p+6] {
			if hexVal(h) < 0 {
				s.i = p
				return 0, s.fail("bad \\u escape")
			}
		}
		return 6, nil
	}
	s.i = p
	return 0, s.fail("bad escape")
}

// hexVal returns the value of a hex digit, or -1.
func hexVal(c byte) int {
	switch {
	case '0' <= c && c <= '9':
		return int(c - '0')
	case 'a' <= c && c <= 'f':
		return int(c-'a') + 10
	case 'A' <= c && c <= 'F':
		return int(c-'A') + 10
	}
	return -1
}

// skip reads over any one value, checking it is well formed.
func (s *scanner) skip() error {
	switch c := s.peek(); {
	case c == '{':
		return s.skipObject()
	case c == '[':
		return s.skipArray()
	case c == '"':
		_, _, err := s.str()
		return err
	case c == 't':
		return s.literal("true")
	case c == 'f':
		return s.literal("false")
	case c == 'n':
		return s.literal("null")
	case c == '-' || ('0' <= c && c <= '9'):
		_, err := s.number()
		return err
	case c == 0 && s.i >= len(s.b):
		return s.fail("unexpected end of data")
	}
	return s.fail("unexpected character")
}

func (s *scanner) skipObject() error {
	more, err := s.enter('{', '}')
	for more && err == nil {
		if _, _, err = s.key(); err != nil {
			return err
		}
		if err = s.skip(); err != nil {
			return err
		}
		more, err = s.next('}')
	}
	return err
}

func (s *scanner) skipArray() error {
	more, err := s.enter('[', ']')
	for more && err == nil {
		if err = s.skip(); err != nil {
			return err
		}
		more, err = s.next(']')
	}
	return err
}

// literal consumes true, false or null.
func (s *scanner) literal(word string) error {
	if !bytes.HasPrefix(s.b[s.i:], []byte(word)) {
		return s.fail("bad literal")
	}
	s.i += len(word)
	return nil
}

// number reads a JSON number. Its value is returned only for a plain
// non-negative integer of at most 15 digits (what a token count is); any
// other valid number yields 0.
func (s *scanner) number() (int, error) {
	start := s.i
	if s.peek() == '-' {
		s.i++
	}
	intStart := s.i
	if !s.digits() {
		return 0, s.fail("bad number")
	}
	if s.b[intStart] == '0' && s.i-intStart > 1 {
		return 0, s.fail("leading zero in number")
	}
	plain := s.b[start] != '-' && s.i-intStart <= 15
	intEnd := s.i
	if s.peek() == '.' {
		s.i++
		plain = false
		if !s.digits() {
			return 0, s.fail("bad fraction")
		}
	}
	if c := s.peek(); c == 'e' || c == 'E' {
		s.i++
		plain = false
		if c := s.peek(); c == '+' || c == '-' {
			s.i++
		}
		if !s.digits() {
			return 0, s.fail("bad exponent")
		}
	}
	if !plain {
		return 0, nil
	}
	v := 0
	for _, d := range s.b[intStart:intEnd] {
		v = v*10 + int(d-'0')
	}
	return v, nil
}

// digits consumes one or more decimal digits.
func (s *scanner) digits() bool {
	start := s.i
	for s.i < len(s.b) && '0' <= s.b[s.i] && s.b[s.i] <= '9' {
		s.i++
	}
	return s.i > start
}

// decodeKey returns a member name with its escapes decoded into dst (at
// most 64 bytes: longer names match none this package looks for). Escapes
// that decode to non-ASCII become 0xFF, which no wanted name contains.
func decodeKey(raw []byte, escaped bool, dst []byte) []byte {
	if !escaped {
		return raw
	}
	for i := 0; i < len(raw); i++ {
		if len(dst) == cap(dst) {
			return nil
		}
		c := raw[i]
		if c != '\\' {
			dst = append(dst, c)
			continue
		}
		i++
		c = raw[i] // str validated every escape, so this is in range
		switch c {
		case 'u':
			v := hexVal(raw[i+1])<<12 | hexVal(raw[i+2])<<8 | hexVal(raw[i+3])<<4 | hexVal(raw[i+4])
			i += 4
			if v >= 0x80 {
				v = 0xFF
			}
			dst = append(dst, byte(v))
		case 'b':
			dst = append(dst, '\b')
		case 'f':
			dst = append(dst, '\f')
		case 'n':
			dst = append(dst, '\n')
		case 'r':
			dst = append(dst, '\r')
		case 't':
			dst = append(dst, '\t')
		default: // '"', '\\', '/'
			dst = append(dst, c)
		}
	}
	return dst
}

// top reads the chunk's outermost object.
func (s *scanner) top(c *Chunk) error {
	var errKey, objErr bool
	var errMsg, topMsg []byte
	k, err := s.nextMember(false)
	for ; k != nil && err == nil; k, err = s.nextMember(true) {
		switch string(k) {
		case "choices":
			err = s.choices(c)
		case "usage":
			err = s.usage(c)
		case "timings":
			err = s.timings(&c.Timings)
		case "error":
			errKey, errMsg, err = s.errorValue()
		case "object":
			objErr, err = s.isString("error")
		case "message":
			topMsg, err = s.stringOrSkip()
		default:
			err = s.skip()
		}
		if err != nil {
			break
		}
	}
	switch {
	case errKey:
		c.Error, c.ErrorMessage = true, errMsg
	case objErr:
		c.Error, c.ErrorMessage = true, topMsg
	}
	return err
}

// choices reads the "choices" array (anything else is skipped).
func (s *scanner) choices(c *Chunk) error {
	c.Content, c.ToolCalls, c.Reasoning, c.FinishReason, c.Text = false, false, false, nil, nil
	if s.peek() != '[' {
		return s.skip()
	}
	more, err := s.enter('[', ']')
	for more && err == nil {
		var p part
		var finish []byte
		if p, finish, err = s.choice(); err != nil {
			return err
		}
		c.Content = c.Content || p.content
		c.ToolCalls = c.ToolCalls || p.tools
		c.Reasoning = c.Reasoning || p.reasoning
		if p.text != nil {
			c.Text = p.text
		}
		if finish != nil {
			c.FinishReason = finish
		}
		more, err = s.next(']')
	}
	return err
}

// part is what a delta or message object carries.
type part struct {
	content, reasoning, tools bool
	text                      []byte // the non-empty answer string, nil without
}

// choice reads one element of "choices"; a non-object is skipped.
func (s *scanner) choice() (part, []byte, error) {
	if s.peek() != '{' {
		return part{}, nil, s.skip()
	}
	var delta, message part
	var text, finish []byte
	k, err := s.nextMember(false)
	for ; k != nil && err == nil; k, err = s.nextMember(true) {
		switch string(k) {
		case "delta":
			delta, err = s.part()
		case "message":
			message, err = s.part()
		case "text":
			text, err = s.outputString()
		case "finish_reason":
			finish, err = s.stringOrSkip()
		default:
			err = s.skip()
		}
		if err != nil {
			break
		}
	}
	p := part{
		content:   delta.content || message.content || len(text) > 0,
		reasoning: delta.reasoning || message.reasoning,
		tools:     delta.tools || message.tools,
		text:      orNonEmpty(orNonEmpty(delta.text, message.text), text),
	}
	return p, finish, err
}

// part reads a delta (streaming) or message (non-streaming) object.
func (s *scanner) part() (part, error) {
	if s.peek() != '{' {
		return part{}, s.skip()
	}
	var content, reasoningContent, reasoning []byte
	var tools bool
	k, err := s.nextMember(false)
	for ; k != nil && err == nil; k, err = s.nextMember(true) {
		switch string(k) {
		case "content":
			content, err = s.outputString()
		case "reasoning_content":
			reasoningContent, err = s.outputString()
		case "reasoning":
			reasoning, err = s.outputString()
		case "tool_calls":
			if tools, err = s.nonEmptyArray(); tools {
				s.outputs++
			}
		default:
			err = s.skip()
		}
		if err != nil {
			break
		}
	}
	return part{
		content:   len(content) > 0 || tools,
		reasoning: len(reasoningContent) > 0 || len(reasoning) > 0,
		tools:     tools,
		text:      orNonEmpty(nil, content),
	}, err
}

// orNonEmpty is b when it holds something, else a.
func orNonEmpty(a, b []byte) []byte {
	if len(b) > 0 {
		return b
	}
	return a
}

// usage reads the "usage" object; null (or anything else) means no usage.
func (s *scanner) usage(c *Chunk) error {
	c.Usage, c.PromptTokens, c.CompletionTokens, c.ReasoningTokens, c.CachedTokens = false, 0, 0, 0, 0
	if s.peek() != '{' {
		return s.skip()
	}
	c.Usage = true
	k, err := s.nextMember(false)
	for ; k != nil && err == nil; k, err = s.nextMember(true) {
		switch string(k) {
		case "prompt_tokens":
			c.PromptTokens, err = s.count()
		case "completion_tokens":
			c.CompletionTokens, err = s.count()
		case "completion_tokens_details":
			c.ReasoningTokens, err = s.member("reasoning_tokens")
		case "prompt_tokens_details":
			c.CachedTokens, err = s.member("cached_tokens")
		default:
			err = s.skip()
		}
		if err != nil {
			break
		}
	}
	return err
}

// member reads an object and returns its count member name (0 when absent):
// usage.completion_tokens_details.reasoning_tokens and
// usage.prompt_tokens_details.cached_tokens.
func (s *scanner) member(name string) (int, error) {
	if s.peek() != '{' {
		return 0, s.skip()
	}
	n := 0
	k, err := s.nextMember(false)
	for ; k != nil && err == nil; k, err = s.nextMember(true) {
		if string(k) == name {
			n, err = s.count()
		} else {
			err = s.skip()
		}
		if err != nil {
			break
		}
	}
	return n, err
}

// errorValue reads the value of a top-level "error" member: an object (its
// "message" is kept) or a string is an error; null and the rest are not.
func (s *scanner) errorValue() (bool, []byte, error) {
	switch s.peek() {
	case '"':
		msg, err := s.stringOrSkip()
		return true, msg, err
	case '{':
	default:
		return false, nil, s.skip()
	}
	var msg []byte
	k, err := s.nextMember(false)
	for ; k != nil && err == nil; k, err = s.nextMember(true) {
		if string(k) == "message" {
			msg, err = s.stringOrSkip()
		} else {
			err = s.skip()
		}
		if err != nil {
			break
		}
	}
	return true, msg, err
}

// stringOrSkip returns a string value's raw contents (non-nil even when
// empty), or skips a value of another type and returns nil.
func (s *scanner) stringOrSkip() ([]byte, error) {
	if s.peek() != '"' {
		return nil, s.skip()
	}
	raw, _, err := s.str()
	if raw == nil && err == nil {
		raw = s.b[s.i:s.i]
	}
	return raw, err
}

// outputString is stringOrSkip for a value that is output when it is a
// non-empty string (content, reasoning, text): it counts it and notes its
// span for chunkShape.
func (s *scanner) outputString() ([]byte, error) {
	raw, err := s.stringOrSkip()
	if len(raw) > 0 && err == nil {
		s.outputs++
		s.out = [2]int{s.i - 1 - len(raw), s.i - 1} // s.i is past the closing quote
	}
	return raw, err
}

// isString reports whether the value is the string want, escapes decoded.
func (s *scanner) isString(want string) (bool, error) {
	if s.peek() != '"' {
		return false, s.skip()
	}
	raw, esc, err := s.str()
	return err == nil && string(decodeKey(raw, esc, s.kb[:0])) == want, err
}

// count reads a token count; a non-number counts as 0.
func (s *scanner) count() (int, error) {
	if c := s.peek(); c == '-' || ('0' <= c && c <= '9') {
		return s.number()
	}
	return 0, s.skip()
}

// nonEmptyArray reads any value and reports whether it was an array with
// at least one element.
func (s *scanner) nonEmptyArray() (bool, error) {
	if s.peek() != '[' {
		return false, s.skip()
	}
	start := s.i
	if err := s.skipArray(); err != nil {
		return false, err
	}
	inner := s.b[start+1 : s.i-1]
	return len(bytes.TrimLeft(inner, " \t\r\n")) > 0, nil
}

// nextMember walks an object's members without a callback (a closure
// would put the scanner on the heap): call it with started false at the
// object's opening brace, then with true after each value is consumed. It
// returns the next member's decoded name (valid until the next key is
// read), or nil once the object is closed.
//
//	k, err := s.nextMember(false)
//	for ; k != nil && err == nil; k, err = s.nextMember(true) {
//		if err = s.fooMember(k, x); err != nil {
//			break
//		}
//	}
func (s *scanner) nextMember(started bool) ([]byte, error) {
	var more bool
	var err error
	if started {
		more, err = s.next('}')
	} else {
		more, err = s.enter('{', '}')
	}
	if !more || err != nil {
		return nil, err
	}
	k, esc, err := s.key()
	if err != nil {
		return nil, err
	}
	if k = decodeKey(k, esc, s.kb[:0]); k == nil {
		k = s.kb[:0] // a name too long to match any: not the end
	}
	return k, nil
}

// boolean reads true or false; any other value is skipped and reads as
// false.
func (s *scanner) boolean() (bool, error) {
	switch s.peek() {
	case 't':
		return true, s.literal("true")
	case 'f':
		return false, s.literal("false")
	}
	return false, s.skip()
}

// start checks that a Scan function's data opens with a JSON object.
func (s *scanner) start() error {
	s.ws()
	if s.peek() != '{' {
		return s.fail("not a JSON object")
	}
	return nil
}

// end checks that nothing but whitespace follows the object.
func (s *scanner) end() error {
	s.ws()
	if s.i != len(s.b) {
		return s.fail("trailing data after the object")
	}
	return nil
}
