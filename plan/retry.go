package plan

import "time"

// Retry is the client's retry policy (target.retry): on 429, 503 and
// timeouts, with exponential backoff and full jitter, Retry-After honoured
// and a retry budget. MaxAttempts 0 or 1 means no retries; other zero
// values take the engine's defaults (docs/plan.md lists them).
type Retry struct {
	// MaxAttempts is the most attempts per request, the first included.
	MaxAttempts int `yaml:"max_attempts"`
	// InitialBackoff caps the first retry's jittered wait; it doubles per retry.
	InitialBackoff time.Duration `yaml:"initial_backoff"`
	// MaxBackoff caps the doubling.
	MaxBackoff time.Duration `yaml:"max_backoff"`
	// MaxRetryAfter is the longest Retry-After honoured; longer ends retries.
	MaxRetryAfter time.Duration `yaml:"max_retry_after"`
	// BudgetRatio caps retries at this fraction of first attempts in the window.
	BudgetRatio float64 `yaml:"budget_ratio"`
	// BudgetMinRetries are always allowed per window.
	BudgetMinRetries int `yaml:"budget_min_retries"`
	// BudgetWindow is the sliding window the budget counts over.
	BudgetWindow time.Duration `yaml:"budget_window"`
}

func (f *Flags) bindRetry() {
	fs := f.fs
	r := func(p *Plan) *Retry { return &p.Target.Retry }
	bind(f, "retries", "target.retry.max_attempts", fs.Int("retries", 0, "most attempts per request, the first included; retries 429, 503 and timeouts (0 or 1: no retries)"), func(p *Plan) *int { return &r(p).MaxAttempts })
	bind(f, "retry-backoff", "target.retry.initial_backoff", fs.Duration("retry-backoff", 0, "cap of the first retry's jittered wait, doubling per retry (0: 500ms)"), func(p *Plan) *time.Duration { return &r(p).InitialBackoff })
	bind(f, "retry-max-backoff", "target.retry.max_backoff", fs.Duration("retry-max-backoff", 0, "cap of the doubling backoff (0: 8s)"), func(p *Plan) *time.Duration { return &r(p).MaxBackoff })
	bind(f, "retry-max-retry-after", "target.retry.max_retry_after", fs.Duration("retry-max-retry-after", 0, "longest Retry-After honoured; longer ends retries (0: 60s)"), func(p *Plan) *time.Duration { return &r(p).MaxRetryAfter })
	bind(f, "retry-budget", "target.retry.budget_ratio", fs.Float64("retry-budget", 0, "retries allowed as a fraction of first attempts in the budget window (0: 0.2)"), func(p *Plan) *float64 { return &r(p).BudgetRatio })
	bind(f, "retry-budget-min", "target.retry.budget_min_retries", fs.Int("retry-budget-min", 0, "retries always allowed per budget window (0: 10)"), func(p *Plan) *int { return &r(p).BudgetMinRetries })
	bind(f, "retry-budget-window", "target.retry.budget_window", fs.Duration("retry-budget-window", 0, "sliding window of the retry budget (0: 10s)"), func(p *Plan) *time.Duration { return &r(p).BudgetWindow })
}

// retry rejects negative retry settings.
func (v *validator) retry() {
	r := v.p.Target.Retry
	for _, f := range []struct {
		path string
		neg  bool
	}{
		{"target.retry.max_attempts", r.MaxAttempts < 0},
		{"target.retry.initial_backoff", r.InitialBackoff < 0},
		{"target.retry.max_backoff", r.MaxBackoff < 0},
		{"target.retry.max_retry_after", r.MaxRetryAfter < 0},
		{"target.retry.budget_ratio", r.BudgetRatio < 0},
		{"target.retry.budget_min_retries", r.BudgetMinRetries < 0},
		{"target.retry.budget_window", r.BudgetWindow < 0},
	} {
		if f.neg {
			v.fail(f.path, "must not be negative")
		}
	}
}
