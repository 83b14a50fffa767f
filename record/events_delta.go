package record

import (
	"encoding/json"
	"errors"
)

// The delta form of a record's event offsets, "events_dus", is what
// records.jsonl.zst held before the packed form (events_packed.go): the
// first value is the first offset, each later one the gap from the offset
// before it. [250000, 271337, 292674] was written [250000,21337,21337].
// Runs written so are still read. Subtraction and addition wrap alike, so
// every int64 sequence, even one that goes backwards or spans the whole
// range, comes back exactly.

// undoEventDeltas turns "events_dus" values into absolute offsets in place.
func undoEventDeltas(d []int64) []int64 {
	prev := int64(0)
	for i := range d {
		d[i] += prev
		prev = d[i]
	}
	return d
}

// errBothEventForms: a line with two forms of offsets has no single reading.
var errBothEventForms = errors.New("record has more than one of events_us, events_dus and events_b64")

// UnmarshalJSON reads a record line in any form: offsets absolute under
// "events_us" (plain records.jsonl, `inferload export --jsonl`), packed
// under "events_b64" (records.jsonl.zst) or as deltas under "events_dus"
// (records.jsonl.zst of runs before the packed form). EventsUS is absolute
// every way, so nothing that reads records knows which it was. A line is
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
		EventsDUS *[]int64 `json:"events_dus"`
		EventsB64 *string  `json:"events_b64"`
	}{plain: (*plain)(r)}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	forms := 0
	for _, present := range []bool{r.EventsUS != nil, v.EventsDUS != nil, v.EventsB64 != nil} {
		if present {
			forms++
		}
	}
	if forms > 1 {
		return errBothEventForms
	}
	switch {
	case v.EventsDUS != nil && len(*v.EventsDUS) > 0:
		r.EventsUS = undoEventDeltas(*v.EventsDUS)
	case v.EventsB64 != nil:
		var err error
		r.EventsUS, err = unpackEvents([]byte(*v.EventsB64))
		return err
	}
	return nil
}
