package plan

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
)

// Redaction is what replaces a secret in anything inferload writes.
const Redaction = "[REDACTED]"

// APIKey returns the API key named by target.api_key_env or
// target.api_key_file, or "" when the plan names neither. A key file's
// surrounding whitespace (a trailing newline) is trimmed. Errors say which
// variable or file is wrong and never contain the key.
func (p *Plan) APIKey(getenv func(string) string, readFile func(string) ([]byte, error)) (string, error) {
	t := &p.Target
	switch {
	case t.APIKeyEnv != "":
		key := strings.TrimSpace(getenv(t.APIKeyEnv))
		if key == "" {
			return "", fmt.Errorf("target.api_key_env: environment variable %s is unset or empty", t.APIKeyEnv)
		}
		return checkKey(key, "environment variable "+t.APIKeyEnv)
	case t.APIKeyFile != "":
		data, err := readFile(t.APIKeyFile)
		if err != nil {
			return "", fmt.Errorf("target.api_key_file: %w", err)
		}
		key := strings.TrimSpace(string(data))
		if key == "" {
			return "", fmt.Errorf("target.api_key_file: %s is empty", t.APIKeyFile)
		}
		return checkKey(key, "file "+t.APIKeyFile)
	}
	return "", nil
}

// checkKey rejects keys that cannot go in an Authorization header, saying
// where the key came from but not what it is.
func checkKey(key, from string) (string, error) {
	for _, c := range []byte(key) {
		if c < 0x20 || c == 0x7f {
			return "", errors.New("the API key in " + from + " contains a line break or control character; it should be one line")
		}
	}
	return key, nil
}

// secretWords mark a name as secret wherever they appear in it.
var secretWords = []string{"authorization", "cookie", "secret", "password", "passwd", "credential", "apikey", "bearer", "signature"}

// looksSecret reports whether a header, body field or query parameter name
// suggests its value is a credential: it contains one of secretWords, or
// its last word (split at '-', '_' or '.') ends in "key", "token" or "auth"
// — so "X-Api-Key", "access_token" and "x-auth" are secret, while
// "max_tokens" and "stop_token_ids" (ordinary request fields) are not.
func looksSecret(name string) bool {
	n := strings.ToLower(name)
	for _, w := range secretWords {
		if strings.Contains(n, w) {
			return true
		}
	}
	parts := strings.FieldsFunc(n, func(r rune) bool { return r == '-' || r == '_' || r == '.' })
	if len(parts) == 0 {
		return false
	}
	last := parts[len(parts)-1]
	return strings.HasSuffix(last, "key") || strings.HasSuffix(last, "token") || last == "auth"
}

// urlRedaction replaces secrets inside a URL. It has no brackets, which
// are not allowed in a URL's user part, so a redacted URL still parses.
const urlRedaction = "REDACTED"

// redactURL hides a URL's password and secret-looking query values, e.g.
// https://user:REDACTED@host/v1?api_key=REDACTED. Text that does not parse
// as a URL is replaced whole if it has a user or query part, where a
// secret could hide.
func redactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		if strings.ContainsAny(raw, "@?") {
			return Redaction
		}
		return raw
	}
	if _, has := u.User.Password(); has {
		u.User = url.UserPassword(u.User.Username(), urlRedaction)
	}
	if u.RawQuery != "" {
		q := u.Query()
		for name := range q {
			if looksSecret(name) {
				q[name] = []string{urlRedaction}
			}
		}
		u.RawQuery = q.Encode()
	}
	return u.String()
}

// redactBody returns a copy of a JSON value with the values of
// secret-looking keys, at any depth, replaced by Redaction.
func redactBody(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, val := range x {
			if looksSecret(k) {
				out[k] = Redaction
			} else {
				out[k] = redactBody(val)
			}
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, val := range x {
			out[i] = redactBody(val)
		}
		return out
	}
	return v
}

// Secrets lists every credential value the plan sends, for redaction from
// everything a run writes or prints (record.Redact): the API key (key, ""
// without one), the values of secret-looking headers of the target, its
// classes and their chain steps, secret-looking body fields, and a URL
// password. A server that echoes any of them back (an error body, a
// /v1/models reply, a Server header) must not get it into a file.
func (p *Plan) Secrets(key string) []string {
	var out []string
	add := func(s string) {
		if s = strings.TrimSpace(s); len(s) >= minSecret && s != Redaction {
			out = append(out, s)
			// The credential of "Bearer sk-..." or "Basic ..." echoed alone.
			if _, tok, ok := strings.Cut(s, " "); ok && len(strings.TrimSpace(tok)) >= minSecret {
				out = append(out, strings.TrimSpace(tok))
			}
		}
	}
	add(key)
	headers := func(h map[string]string) {
		for k, v := range h {
			if looksSecret(k) {
				add(v)
			}
		}
	}
	headers(p.Target.Headers)
	bodySecrets(p.Target.Body, add)
	for _, c := range p.Workload.Classes {
		bodySecrets(c.Body, add)
		for _, h := range c.httpSteps() {
			headers(h.Headers)
			querySecrets(h.URL, add)
		}
	}
	for _, raw := range p.Target.BaseURLs() {
		if u, err := url.Parse(raw); err == nil {
			if pw, ok := u.User.Password(); ok {
				add(pw)
			}
		}
	}
	return out
}

// minSecret is the shortest value Secrets lists: replacing every "ab" of
// every message would garble them while protecting nothing.
const minSecret = 4

// querySecrets calls add with the values of secret-looking query
// parameters of raw.
func querySecrets(raw string, add func(string)) {
	u, err := url.Parse(raw)
	if err != nil {
		return
	}
	for name, vs := range u.Query() {
		if looksSecret(name) {
			for _, v := range vs {
				add(v)
			}
		}
	}
}

// bodySecrets calls add with the string values of secret-looking keys.
func bodySecrets(v any, add func(string)) {
	switch x := v.(type) {
	case map[string]any:
		for k, val := range x {
			if s, ok := val.(string); ok && looksSecret(k) {
				add(s)
			} else {
				bodySecrets(val, add)
			}
		}
	case []any:
		for _, val := range x {
			bodySecrets(val, add)
		}
	}
}
