package record

import (
	"encoding/json"
	"errors"
	"strconv"
)

// The compact form of a record's event offsets, "events_dus": the first
// value is the first offset, each later one the gap from the offset before
// it. [250000, 271337, 292674] is written [250000,21337,21337]. Gaps of a
// streamed reply are a few thousand microseconds and repeat, so they take
// half the digits of absolute offsets and compress several times better.
// Subtraction and addition wrap alike, so every int64 sequence, even one
// that goes backwards or spans the whole range, comes back exactly.

// appendEventDeltas writes events as "events_dus"; nothing when empty, as
// appendEvents omits "events_us".
func appendEventDeltas(b []byte, events []int64) []byte {
	if len(events) == 0 {
		return b
	}
	b = append(b, `,"events_dus":[`...)
	prev := int64(0)
	for i, v := range events {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, v-prev, 10)
		prev = v
	}
	return append(b, ']')
}

// undoEventDeltas turns "events_dus" values into absolute offsets in place.
func undoEventDeltas(d []int64) []int64 {
	prev := int64(0)
	for i := range d {
		d[i] += prev
		prev = d[i]
	}
	return d
}

// errBothEventForms: a line with both forms has no single reading.
var errBothEventForms = errors.New("record has both events_us and events_dus")

// UnmarshalJSON reads a record line in either form: offsets absolute under
// "events_us" (plain records.jsonl, `inferload export --jsonl`) or as
// deltas under "events_dus" (records.jsonl.zst). EventsUS is absolute
// either way, so nothing that reads records knows which it was. A line is
// a whole record: it replaces all of r. Lines as our writer writes them
// take decodeResult's path, the rest encoding/json's; both read alike.
func (r *Result) UnmarshalJSON(b []byte) error {
	*r = Result{}
	if decodeResult(b, r) {
		return nil
	}
	*r = Result{}
	return r.decodeJSON(b)
}

// decodeJSON is UnmarshalJSON through encoding/json alone.
func (r *Result) decodeJSON(b []byte) error {
	type plain Result // no methods: decodes field by field as before
	v := struct {
		*plain
		EventsDUS []int64 `json:"events_dus"`
	}{plain: (*plain)(r)}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	if len(v.EventsDUS) == 0 {
		return nil
	}
	if len(r.EventsUS) > 0 {
		return errBothEventForms
	}
	r.EventsUS = undoEventDeltas(v.EventsDUS)
	return nil
}
