package record

// Rules are what an Aggregate judges and breaks its records down by, all
// taken from the plan (plan.Plan.Rules builds them). The run's summary
// and the live page both set them through SetRules, so a rule added here
// reaches both or neither.
type Rules struct {
	// InputBuckets are the input-length buckets' upper bounds (nil: the
	// default buckets).
	InputBuckets []int
	// SessionTurns names the conversational classes and their turns per
	// conversation (nil: no session figures).
	SessionTurns map[string]int
	// SLOs judge goodput (nil: every success counts).
	SLOs *SLOs
	// Model is the served model's size, for the FLOP estimate (nil: no
	// estimate, summary.json has no compute).
	Model *Model
}

// SetRules sets every rule of r. Call it before the first Add.
func (a *Aggregate) SetRules(r Rules) {
	a.SetInputBuckets(r.InputBuckets)
	a.SetSessionTurns(r.SessionTurns)
	a.SetSLOs(r.SLOs)
	a.SetModel(r.Model)
}
