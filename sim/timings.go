package sim

import (
	"strconv"
	"time"
)

// seqTimes is the engine's own account of one request, on its clock:
// queued from arrival to first admission, prefill from admission to the
// first token, decode from the first token to the last. The final stream
// chunk carries it as llama.cpp's "timings" object (plus queue_ms, which
// llama.cpp does not send), so a client's decomposition can be checked
// against the truth. Times are simulated time: with Speedup above 1 they
// run faster than the client's clock.
type seqTimes struct {
	queue, prefill, decode time.Duration
	promptN, predictedN    int
	cacheN                 int
}

// timesOf reads a finished sequence's times.
func timesOf(s *Sequence) seqTimes {
	return seqTimes{
		queue:      s.scheduled - s.arrival,
		prefill:    s.firstToken - s.scheduled,
		decode:     s.lastToken - s.firstToken,
		promptN:    s.req.PromptTokens - s.cachedTokens,
		predictedN: s.generated,
		cacheN:     s.cachedTokens,
	}
}

// appendJSON renders the timings object as llama.cpp's server does (the
// per-token and per-second rates left out), milliseconds with microsecond
// precision.
func (t seqTimes) appendJSON(b []byte) []byte {
	b = strconv.AppendInt(append(b, `{"cache_n":`...), int64(t.cacheN), 10)
	b = strconv.AppendInt(append(b, `,"prompt_n":`...), int64(t.promptN), 10)
	b = appendMS(append(b, `,"prompt_ms":`...), t.prefill)
	b = strconv.AppendInt(append(b, `,"predicted_n":`...), int64(t.predictedN), 10)
	b = appendMS(append(b, `,"predicted_ms":`...), t.decode)
	b = appendMS(append(b, `,"queue_ms":`...), t.queue)
	return append(b, '}')
}

// appendMS writes d in milliseconds with three decimals (exact to the
// microsecond, so the client reads back the engine's own figure).
func appendMS(b []byte, d time.Duration) []byte {
	us := max(d.Microseconds(), 0)
	b = strconv.AppendInt(b, us/1000, 10)
	frac := us % 1000
	b = append(b, '.', byte('0'+frac/100), byte('0'+frac/10%10), byte('0'+frac%10))
	return b
}
