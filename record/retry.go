package record

// Attempt is one earlier try of a retried request: enough to see when it
// went out, how it failed and how long the client waited before the next.
// Offsets are on the run clock, in microseconds.
type Attempt struct {
	SendUS int64     `json:"send_us"`
	EndUS  int64     `json:"end_us"`
	Status int       `json:"status,omitempty"`
	Error  ErrorKind `json:"error"`
	// RetryAfterUS is the server's Retry-After hint, 0 without one.
	RetryAfterUS int64 `json:"retry_after_us,omitempty"`
	// WaitUS is the backoff the client chose before the next attempt.
	WaitUS int64 `json:"wait_us"`
}

// Why a retryable failure was not retried (Result.RetryStop).
const (
	// RetryStopAttempts: the policy's max_attempts was reached.
	RetryStopAttempts = "max_attempts"
	// RetryStopBudget: the retry budget for the window was spent.
	RetryStopBudget = "budget"
	// RetryStopRetryAfter: the server asked to wait longer than the
	// policy accepts.
	RetryStopRetryAfter = "retry_after"
	// RetryStopStopped: the run stopped (abort or end of grace) while the
	// client was backing off.
	RetryStopStopped = "stopped"
	// RetryStopIssuing: issuing had stopped (the end of the duration, a
	// request count reached, Ctrl-C): the grace period lets requests in
	// flight finish but makes no new attempts, so the record keeps the
	// last attempt's own error.
	RetryStopIssuing = "issuing_stopped"
)

// Retries is summary.json's retry block: offered requests against the
// attempts that load put on the wire. It is absent when no request was
// retried and none gave up on a retryable failure.
type Retries struct {
	// Requests counts measured requests (the offered load).
	Requests int64 `json:"requests"`
	// Attempts counts their attempts, first tries included (the attempted load).
	Attempts int64 `json:"attempts"`
	// Amplification is Attempts ÷ Requests: 1 without retries.
	Amplification float64 `json:"amplification"`
	// Retried counts requests that needed more than one attempt.
	Retried int64 `json:"retried"`
	// SucceededAfterRetry counts retried requests whose last attempt succeeded.
	SucceededAfterRetry int64 `json:"succeeded_after_retry"`
	// RetriedErrors counts retried attempts by the kind of failure that
	// triggered the retry.
	RetriedErrors map[string]int64 `json:"retried_errors"`
	// GaveUp counts retryable failures that were not retried, by reason
	// (max_attempts, budget, retry_after, stopped).
	GaveUp map[string]int64 `json:"gave_up"`
}

// retryState accumulates Retries over measured records.
type retryState struct {
	requests, attempts, retried, succeededAfter int64
	errors, gaveUp                              map[string]int64
}

// add folds in one measured record.
func (s *retryState) add(r *Result) {
	s.requests++
	s.attempts += int64(1 + len(r.Attempts))
	if len(r.Attempts) > 0 {
		s.retried++
		if r.OK() {
			s.succeededAfter++
		}
		for _, at := range r.Attempts {
			s.errors = bump(s.errors, string(at.Error))
		}
	}
	if r.RetryStop != "" {
		s.gaveUp = bump(s.gaveUp, r.RetryStop)
	}
}

func bump(m map[string]int64, k string) map[string]int64 {
	if m == nil {
		m = make(map[string]int64)
	}
	m[k]++
	return m
}

// summary returns the block, or nil when retries played no part.
func (s *retryState) summary() *Retries {
	if s.retried == 0 && len(s.gaveUp) == 0 {
		return nil
	}
	return &Retries{
		Requests: s.requests, Attempts: s.attempts,
		Amplification: ratio(s.attempts, s.requests),
		Retried:       s.retried, SucceededAfterRetry: s.succeededAfter,
		RetriedErrors: orEmpty(s.errors), GaveUp: orEmpty(s.gaveUp),
	}
}

func orEmpty(m map[string]int64) map[string]int64 {
	if m == nil {
		return map[string]int64{}
	}
	return m
}
