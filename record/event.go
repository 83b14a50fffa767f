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
	// the measured window ends here. Records says how many records the
	// run wrote.
	EventRunEnd EventKind = "run_end"
	// EventInterrupted: Ctrl-C, SIGTERM or SIGHUP arrived, or the run
	// directory stopped being written (a full disk); Message says which.
	EventInterrupted EventKind = "interrupted"
	// EventFirstError: the first failed request; Message holds its kind
	// and short message.
	EventFirstError EventKind = "first_error"
	// EventNote: free-form annotation.
	EventNote EventKind = "note"
	// EventStageEnd: a stage of a staged run, sweep or capacity search
	// finished; Stage says what it was and where its window lay, so its
	// step is rebuilt from its records.
	EventStageEnd EventKind = "stage_end"
)

// Event is one line of events.jsonl: an annotation on the run clock.
type Event struct {
	// TimeUS is the offset from the run start, in microseconds.
	TimeUS  int64     `json:"time_us"`
	Kind    EventKind `json:"kind"`
	Message string    `json:"message,omitempty"`
	// Stage is set on stage_end only.
	Stage *StageMark `json:"stage,omitempty"`
	// Records is set on run_end only: how many records the run handed to
	// its records file, so a rebuild that reads fewer can say how many
	// are missing (0: not counted, as in runs written before it was).
	Records int64 `json:"records,omitempty"`
}

// StageMark is what a stage_end event keeps of its stage: the load it
// applied and its window on the run clock. A step's figures are its
// records' over [WarmupEndUS, MeasureEndUS], as a run's are over its own.
type StageMark struct {
	// Index is the 1-based stage number, the records' step field.
	Index  int     `json:"index"`
	Kind   string  `json:"kind"`
	Mode   string  `json:"mode"`
	Target float64 `json:"target"`
	From   float64 `json:"from,omitempty"`
	// StartUS is when the stage's clock started; its warm-up ended at
	// WarmupEndUS and its issuing stopped at MeasureEndUS.
	StartUS      int64 `json:"start_us"`
	WarmupEndUS  int64 `json:"warmup_end_us"`
	MeasureEndUS int64 `json:"measure_end_us"`
	// EndUS is the event's own time (its last request finished); it is
	// not written again.
	EndUS int64 `json:"-"`
	// Interrupted is true when the run was stopped during the stage: its
	// figures are kept, but a capacity search does not count it as a probe.
	Interrupted bool `json:"interrupted,omitempty"`
}

// RunInfo is the stage's window, as its step's summary needs it.
func (m StageMark) RunInfo() RunInfo {
	return RunInfo{Mode: m.Mode, WarmupEndUS: m.WarmupEndUS, MeasureEndUS: m.MeasureEndUS, EndUS: m.EndUS}
}
