package record

import (
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Redaction replaces a secret in anything a run writes or prints.
const Redaction = "[redacted]"

// fragment is the length of the shortest piece of a secret that is
// redacted on its own, when a server split the secret (into two JSON
// strings, around a line break, with "…" in the middle). Only secrets of
// at least twice this length are looked for in pieces, so a piece is
// never less than a quarter of a 32-byte key: 8 bytes of a random key
// appear in ordinary text by chance about once in 36^8 (3e12) windows.
const fragment = 8

// Redactor removes a run's secrets (plan.Secrets) from text, whatever its
// source: a server's error body, a /v1/models reply, a header it echoed.
// It recognises a secret as it was sent and as a server may have altered
// it:
//
//   - in another case ("SK-ABC…" for "sk-abc…"): every match ignores
//     ASCII case;
//   - escaped, as JSON writes it (`\/`, `\u002b`, Go's `\u003c`) or as a
//     URL does (`%2B`);
//   - split, when the secret has no white space and is at least 16 bytes:
//     every run of 8 or more bytes that occurs in the secret (in any of
//     the forms above) is redacted, so each half of a key cut in two is.
//
// The zero value redacts nothing. It is safe for concurrent use.
type Redactor struct {
	forms  []string            // lowercase forms of every secret, longest first
	pieces map[string]struct{} // lowercase fragment-byte pieces of the splittable forms
}

// NewRedactor builds a Redactor for secrets; empty strings are ignored.
func NewRedactor(secrets []string) Redactor {
	var r Redactor
	for _, s := range secrets {
		if s == "" {
			continue
		}
		for _, f := range alteredForms(s) {
			f = asciiLower(f)
			if !slices.Contains(r.forms, f) {
				r.forms = append(r.forms, f)
			}
			if len(f) >= 2*fragment && !strings.ContainsFunc(f, unicode.IsSpace) {
				r.addPieces(f)
			}
		}
	}
	slices.SortFunc(r.forms, func(a, b string) int { return len(b) - len(a) })
	return r
}

func (r *Redactor) addPieces(f string) {
	if r.pieces == nil {
		r.pieces = map[string]struct{}{}
	}
	for i := 0; i+fragment <= len(f); i++ {
		r.pieces[f[i:i+fragment]] = struct{}{}
	}
}

// alteredForms are s and the forms a server may have turned it into by
// escaping it for JSON or a URL (case is handled by the match).
func alteredForms(s string) []string {
	forms := []string{s, strings.ReplaceAll(s, "/", `\/`), url.QueryEscape(s), url.PathEscape(s), unicodeEscaped(s)}
	if b, err := json.Marshal(s); err == nil {
		forms = append(forms, string(b[1:len(b)-1]))
	}
	return forms
}

// unicodeEscaped writes every byte of s that is not a letter or digit as
// JSON's \u00XX, as some servers escape everything but alphanumerics.
func unicodeEscaped(s string) string {
	var b strings.Builder
	for _, c := range []byte(s) {
		if c < utf8.RuneSelf && (c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			b.WriteByte(c)
		} else {
			fmt.Fprintf(&b, `\u%04x`, c)
		}
	}
	return b.String()
}

// Redact returns text with every secret, and every recognisable altered
// form or piece of one, replaced by Redaction; overlapping and adjacent
// matches become one Redaction.
func (r Redactor) Redact(text string) string {
	if r.Empty() || text == "" {
		return text
	}
	lower := asciiLower(text)
	var hidden []bool // by byte of text; nil until a match
	mark := func(from, to int) {
		if hidden == nil {
			hidden = make([]bool, len(text))
		}
		for i := from; i < to; i++ {
			hidden[i] = true
		}
	}
	for _, f := range r.forms {
		for at := 0; ; {
			i := strings.Index(lower[at:], f)
			if i < 0 {
				break
			}
			mark(at+i, at+i+len(f))
			at += i + 1
		}
	}
	for i := 0; r.pieces != nil && i+fragment <= len(lower); i++ {
		if _, ok := r.pieces[lower[i:i+fragment]]; ok {
			mark(i, i+fragment)
		}
	}
	if hidden == nil {
		return text
	}
	var b strings.Builder
	for i := 0; i < len(text); i++ {
		switch {
		case !hidden[i]:
			b.WriteByte(text[i])
		case i == 0 || !hidden[i-1]:
			b.WriteString(Redaction)
		}
	}
	return b.String()
}

// asciiLower lowers ASCII letters only, so byte offsets in the result are
// those of s.
func asciiLower(s string) string {
	if !strings.ContainsFunc(s, func(c rune) bool { return c >= 'A' && c <= 'Z' }) {
		return s
	}
	b := []byte(s)
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

// Empty reports whether r redacts nothing.
func (r Redactor) Empty() bool { return len(r.forms) == 0 }
