package record

import (
	"slices"
	"strings"
)

// Redaction replaces a secret in anything a run writes or prints.
const Redaction = "[redacted]"

// Redactor removes a run's secrets (plan.Secrets) from text, whatever its
// source: a server's error body, a /v1/models reply, a header it echoed.
// The zero value redacts nothing. It is safe for concurrent use.
type Redactor struct {
	secrets []string // longest first, so a key is never half-replaced by a shorter one inside it
}

// NewRedactor builds a Redactor for secrets; empty strings are ignored.
func NewRedactor(secrets []string) Redactor {
	var s []string
	for _, v := range secrets {
		if v != "" && !slices.Contains(s, v) {
			s = append(s, v)
		}
	}
	slices.SortFunc(s, func(a, b string) int { return len(b) - len(a) })
	return Redactor{secrets: s}
}

// Redact returns text with every secret replaced by Redaction.
func (r Redactor) Redact(text string) string {
	for _, s := range r.secrets {
		if strings.Contains(text, s) {
			text = strings.ReplaceAll(text, s, Redaction)
		}
	}
	return text
}

// Empty reports whether r redacts nothing.
func (r Redactor) Empty() bool { return len(r.secrets) == 0 }
