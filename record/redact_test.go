package record

import (
	"strings"
	"testing"
)

// TestRedactorAlteredForms: a secret is redacted as it was sent and in the
// forms a server can turn it into, and text without one comes back as is.
func TestRedactorAlteredForms(t *testing.T) {
	t.Parallel()
	const key = "sk-live/ab+CD_0123456789xyz" // 27 bytes, with a '/' and a '+' to escape
	r := NewRedactor([]string{key, "Bearer " + key, "pw42"})
	tests := []struct {
		name, in, want string
	}{
		// As sent.
		{"verbatim", "bad key " + key + "!", "bad key [redacted]!"},
		// A gateway that upper-cases what it logs.
		{"upper-cased", "KEY=" + strings.ToUpper(key), "KEY=[redacted]"},
		{"lower-cased", "key=" + strings.ToLower(key), "key=[redacted]"},
		// JSON writers that escape '/' (PHP, some gateways).
		{"json slash", `{"k":"sk-live\/ab+CD_0123456789xyz"}`, `{"k":"[redacted]"}`},
		// Writers that escape everything but letters and digits.
		{"json unicode", `"sk\u002dlive\u002fab\u002bCD\u005f0123456789xyz"`, `"[redacted]"`},
		// Echoed in a query string.
		{"url escaped", "?key=sk-live%2Fab%2BCD_0123456789xyz&x=1", "?key=[redacted]&x=1"},
		// Split in two around other text: each half is 8 bytes or more.
		{"split", `"sk-live/ab+C" "D_0123456789xyz"`, `"[redacted]" "[redacted]"`},
		{"split by a line break", "sk-live/ab+CD_0\n123456789xyz", "[redacted]\n[redacted]"},
		// The header value and the key inside it become one redaction.
		{"bearer", "Authorization: Bearer " + key, "Authorization: [redacted]"},
		// A short secret (under 16 bytes) is matched whole, never in pieces.
		{"short whole", "password pw42 and PW42", "password [redacted] and [redacted]"},
		// Any 8 bytes of a long key are a piece of it; text without one is unchanged.
		{"an 8-byte piece", "sk-live/ is a prefix of 8 bytes", "[redacted] is a prefix of 8 bytes"},
		{"unrelated", "model llama-3-8b not found", "model llama-3-8b not found"},
		{"empty", "", ""},
	}
	for _, tt := range tests {
		if got := r.Redact(tt.in); got != tt.want {
			t.Errorf("%s: Redact(%q) = %q, want %q", tt.name, tt.in, got, tt.want)
		}
	}
}

// TestRedactorZeroValue redacts nothing.
func TestRedactorZeroValue(t *testing.T) {
	t.Parallel()
	var r Redactor
	if !r.Empty() || r.Redact("sk-anything") != "sk-anything" {
		t.Fatal("the zero Redactor changed text")
	}
	if !NewRedactor([]string{"", ""}).Empty() {
		t.Fatal("empty secrets made a Redactor that redacts")
	}
}

// FuzzRedactor: whatever the text, no form of the secret survives and
// the result is never longer than text with every byte redacted.
func FuzzRedactor(f *testing.F) {
	const key = "sk-fuzz-0123456789abcdef"
	r := NewRedactor([]string{key})
	f.Add("a " + key + " b")
	f.Add(strings.ToUpper(key))
	f.Add("sk-fuzz-01234567" + "\n" + "89abcdef")
	f.Fuzz(func(t *testing.T, text string) {
		got := r.Redact(text)
		if strings.Contains(strings.ToLower(got), key) {
			t.Fatalf("Redact(%q) = %q still holds the key", text, got)
		}
		if len(got) > len(text)*len(Redaction) {
			t.Fatalf("Redact(%q) grew to %d bytes", text, len(got))
		}
	})
}
