package protocol

// ServerTimings is what a server says, in band, about the time it spent on
// one request: llama.cpp's "timings" object in its final stream chunk (or
// its non-streamed reply). Durations are the server's own measurements, in
// microseconds (llama.cpp sends milliseconds with a fraction).
type ServerTimings struct {
	// Present is true when a timings object was seen.
	Present bool
	// PromptN and PromptUS are timings.prompt_n (prompt tokens evaluated,
	// cached ones excluded) and prompt_ms: the prefill.
	PromptN  int
	PromptUS int64
	// PredictedN and PredictedUS are timings.predicted_n and predicted_ms:
	// the decode.
	PredictedN  int
	PredictedUS int64
	// CacheN is timings.cache_n, prompt tokens reused from the cache.
	CacheN int
	// QueueUS is timings.queue_ms, the wait before the request's prefill
	// began, when the server reports it (HasQueue): llama.cpp does not;
	// inferload's simulator does.
	QueueUS  int64
	HasQueue bool
	// InferenceUS is prefill and decode together, from servers that do
	// not split them (TGI's x-inference-time); PromptUS and PredictedUS
	// are 0 then.
	InferenceUS int64
}

// timings reads a "timings" object. It appears in a stream's final chunk
// only, so the per-token path never comes here.
func (s *scanner) timings(t *ServerTimings) error {
	*t = ServerTimings{}
	if s.peek() != '{' {
		return s.skip()
	}
	t.Present = true
	k, err := s.nextMember(false)
	for ; k != nil && err == nil; k, err = s.nextMember(true) {
		switch string(k) {
		case "prompt_n":
			t.PromptN, err = s.count()
		case "prompt_ms":
			t.PromptUS, err = s.millisUS()
		case "predicted_n":
			t.PredictedN, err = s.count()
		case "predicted_ms":
			t.PredictedUS, err = s.millisUS()
		case "cache_n":
			t.CacheN, err = s.count()
		case "queue_ms":
			t.QueueUS, err = s.millisUS()
			t.HasQueue = true
		default:
			err = s.skip()
		}
		if err != nil {
			break
		}
	}
	return err
}

// millisUS reads a duration in milliseconds (24.327) as whole microseconds,
// rounded to the nearest. A negative number, one with an exponent, one
// beyond 12 integer digits or a non-number reads as 0.
func (s *scanner) millisUS() (int64, error) {
	if c := s.peek(); c != '-' && (c < '0' || c > '9') {
		return 0, s.skip()
	}
	start := s.i
	if _, err := s.number(); err != nil {
		return 0, err
	}
	return msToUS(s.b[start:s.i]), nil
}

// msToUS converts a valid JSON number's bytes (checked by number) from
// milliseconds to rounded microseconds.
func msToUS(b []byte) int64 {
	if b[0] == '-' {
		return 0
	}
	var ms int64
	i := 0
	for ; i < len(b) && b[i] != '.'; i++ {
		if b[i] == 'e' || b[i] == 'E' || i >= 12 {
			return 0
		}
		ms = ms*10 + int64(b[i]-'0')
	}
	us := ms * 1000
	scale := int64(100)
	for i++; i < len(b); i++ {
		if b[i] == 'e' || b[i] == 'E' {
			return 0
		}
		d := int64(b[i] - '0')
		switch {
		case scale > 0:
			us += d * scale
			scale /= 10
		case scale == 0:
			if d >= 5 {
				us++
			}
			scale = -1
		}
	}
	return us
}
