package protocol

import (
	"strconv"
	"unicode/utf8"
)

// renderPlain writes the common chat and completions body (no images, no
// Extra fields) without the map and reflection Render otherwise builds:
// those cost about 12 µs a request, a tenth of a 200-token stream's client
// CPU when reads carry many tokens. The bytes are Render's: keys in sorted
// order, strings escaped as encoding/json escapes them without HTML
// escaping (TestRenderPlainMatches, FuzzRenderPlain). ok is false for any
// other body.
func (b OpenAIBody) renderPlain(api API) (body []byte, ok bool) {
	if (api != APIChat && api != APICompletions) || len(b.Extra) > 0 || b.hasImages() || b.carriesTools() {
		return nil, false
	}
	n := len(b.Prompt) + 160
	for _, m := range b.Messages {
		n += len(m.Content) + 32
	}
	out := make([]byte, 0, n)
	out = append(out, '{')
	if b.IgnoreEOS {
		out = append(out, `"ignore_eos":true,`...)
	}
	if b.sendMaxTokens() {
		out = append(strconv.AppendInt(append(out, `"max_tokens":`...), int64(b.MaxTokens), 10), ',')
	}
	if api == APIChat {
		out = append(out, `"messages":[`...)
		for i, m := range b.chatMessages() {
			if i > 0 {
				out = append(out, ',')
			}
			out = appendJSONString(append(out, `{"role":`...), m.Role)
			out = append(appendJSONString(append(out, `,"content":`...), m.Content), '}')
		}
		out = append(out, "],"...)
	}
	if b.Model != "" {
		out = append(appendJSONString(append(out, `"model":`...), b.Model), ',')
	}
	if api == APICompletions {
		out = append(appendJSONString(append(out, `"prompt":`...), b.Prompt), ',')
	}
	out = strconv.AppendBool(append(out, `"stream":`...), b.Stream)
	if b.Stream && b.IncludeUsage {
		out = append(out, `,"stream_options":{"include_usage":true}`...)
	}
	return append(out, '}'), true
}

// appendJSONString quotes s as encoding/json does with HTML escaping off:
// '"' and '\\' and control characters escaped (the short forms where JSON
// has them), invalid UTF-8 as U+FFFD, U+2028 and U+2029 as \u escapes
// (JavaScript reads them as line ends).
func appendJSONString(dst []byte, s string) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c >= ' ' && c != '"' && c != '\\' && c < utf8.RuneSelf {
			i++
			continue
		}
		if c < utf8.RuneSelf {
			dst = append(dst, s[start:i]...)
			switch c {
			case '"', '\\':
				dst = append(dst, '\\', c)
			case '\b':
				dst = append(dst, `\b`...)
			case '\f':
				dst = append(dst, `\f`...)
			case '\n':
				dst = append(dst, `\n`...)
			case '\r':
				dst = append(dst, `\r`...)
			case '\t':
				dst = append(dst, `\t`...)
			default:
				dst = append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(append(dst, s[start:i]...), `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			dst = append(append(dst, s[start:i]...), '\\', 'u', '2', '0', '2', hex[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	return append(append(dst, s[start:]...), '"')
}
