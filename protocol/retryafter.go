package protocol

import (
	"net/http"
	"strconv"
	"strings"
	"time"
)

// maxRetryAfter bounds a parsed Retry-After so an absurd value cannot
// overflow a duration; callers apply their own, much smaller, cap.
const maxRetryAfter = 24 * time.Hour

// RetryAfter parses a Retry-After header value (RFC 9110 §10.2.3): either
// delay-seconds ("120") or an HTTP date, read relative to now. It returns 0
// for an empty, malformed, negative or past value, so a bad header simply
// means "no hint" and the caller's own backoff applies.
func RetryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if secs, err := strconv.ParseInt(v, 10, 64); err == nil {
		if secs <= 0 {
			return 0
		}
		return min(time.Duration(min(secs, int64(maxRetryAfter/time.Second)))*time.Second, maxRetryAfter)
	}
	at, err := http.ParseTime(v)
	if err != nil {
		return 0
	}
	return min(max(at.Sub(now), 0), maxRetryAfter)
}
