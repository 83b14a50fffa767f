package record

// EventKind names an annotation in events.jsonl.
type EventKind string

// The annotation kinds, in the order a run normally produces them.
const (
	// EventRunStart: the run clock's zero. Its Message holds the UTC wall
	// time of the start in RFC 3339 form, so a report can be rebuilt with
	// the same start time.
	EventRunStart EventKind = "run_start"
	// EventWarmupEnd: the measured window begins; records sent before it
	// are flagged Warmup.
	EventWarmupEnd EventKind = "warmup_end"
	// EventMeasureEnd: issuing stopped (duration or request count reached,
	// or a signal); in-flight requests may still finish.
	EventMeasureEnd EventKind = "measure_end"
	// EventRunEnd: the last request finished or the grace period ran out;
	// the measured window ends here.
	EventRunEnd EventKind = "run_end"
	// EventInterrupted: Ctrl-C or SIGTERM arrived; Message says which.
	EventInterrupted EventKind = "interrupted"
	// EventFirstError: the first failed request; Message holds its kind
	// and short message.
	EventFirstError EventKind = "first_error"
	// EventNote: free-form annotation.
	EventNote EventKind = "note"
)

// Event is one line of events.jsonl: an annotation on the run clock.
type Event struct {
	// TimeUS is the offset from the run start, in microseconds.
	TimeUS  int64     `json:"time_us"`
	Kind    EventKind `json:"kind"`
	Message string    `json:"message,omitempty"`
}
