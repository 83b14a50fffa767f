package record

import (
	"encoding/json"
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"
)

// TestCompactResultRoundTrip: a record written in the compact form reads
// back exactly as the same record written in the plain form does, for
// every field, every omitempty case, offsets that go backwards, repeat or
// span the whole int64 range, and capped streams with a tail.
func TestCompactResultRoundTrip(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		r    Result
	}{
		// Nothing set: no events field either way.
		{"zero", Result{}},
		// Every field, so a field the compact writer forgot would differ.
		{"every field set", everyFieldSet()},
		// An empty slice is omitted, as in the plain form.
		{"empty events", Result{EventsUS: []int64{}}},
		// One offset: the first delta is the offset itself.
		{"one event", Result{EventsUS: []int64{42}}},
		// Zero and negative gaps (a kernel clock can order two reads so).
		{"zero and negative gaps", Result{EventsUS: []int64{100, 100, 90, -5, -5, 0}}},
		// Deltas that wrap around int64 still come back exactly.
		{"extremes", Result{EventsUS: []int64{math.MinInt64, math.MaxInt64, math.MinInt64, 0, math.MaxInt64}}},
		// A capped stream keeps its tail beside the kept offsets.
		{"tail", Result{EventsUS: []int64{5, 9}, EventsTail: &EventsTail{Dropped: 3, LastUS: 99, Gaps: [][2]int64{{4, 2}, {7, 1}}}}},
	}
	for _, rr := range randomRecords(50, 17) {
		tests = append(tests, struct {
			name string
			r    Result
		}{"random", rr})
	}
	for _, tt := range tests {
		var plain, compact Result
		if err := json.Unmarshal(AppendResultJSON(nil, &tt.r), &plain); err != nil {
			t.Fatalf("%s: plain: %v", tt.name, err)
		}
		line := AppendCompactResultJSON(nil, &tt.r)
		if err := json.Unmarshal(line, &compact); err != nil {
			t.Fatalf("%s: compact: %v", tt.name, err)
		}
		if !reflect.DeepEqual(plain, compact) {
			t.Errorf("%s: compact %s read back as\n%+v\nwant %+v", tt.name, line, compact, plain)
		}
		if len(tt.r.EventsUS) > 0 && !strings.Contains(string(line), `"events_dus":[`) {
			t.Errorf("%s: compact line has no events_dus: %s", tt.name, line)
		}
	}
}

// TestCompactResultErrors: lines that have no single reading are refused.
func TestCompactResultErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, line string
		want       error // nil: any error will do
	}{
		// Both forms at once: which offsets are meant cannot be known.
		{"both forms", `{"id":1,"events_us":[1,2],"events_dus":[1,1]}`, errBothEventForms},
		// Deltas that are not integers.
		{"float delta", `{"id":1,"events_dus":[1.5]}`, nil},
		// Deltas past int64.
		{"huge delta", `{"id":1,"events_dus":[99999999999999999999]}`, nil},
		// A field of the plain part still has its type checked.
		{"wrong id type", `{"id":"one","events_dus":[1]}`, nil},
	}
	for _, tt := range tests {
		var r Result
		err := json.Unmarshal([]byte(tt.line), &r)
		if err == nil || (tt.want != nil && !errors.Is(err, tt.want)) {
			t.Errorf("%s: err = %v, want %v", tt.name, err, tt.want)
		}
	}
}

// FuzzResultJSON: whatever a line holds, decoding it never panics, and a
// record that decodes comes back the same through the compact form.
func FuzzResultJSON(f *testing.F) {
	f.Add([]byte(`{"id":1,"events_dus":[250000,21337,-4,0],"stream":true}`))
	f.Add([]byte(`{"id":2,"events_us":[3,5,9],"events_tail":{"dropped":1,"last_us":12,"gaps":[[3,1]]}}`))
	f.Add([]byte(`{"events_dus":[-9223372036854775808,-1]}`))
	f.Fuzz(func(t *testing.T, line []byte) {
		var r Result
		if json.Unmarshal(line, &r) != nil {
			return
		}
		var plain, compact Result
		if err := json.Unmarshal(AppendResultJSON(nil, &r), &plain); err != nil {
			t.Fatalf("plain re-encoding does not decode: %v", err)
		}
		if err := json.Unmarshal(AppendCompactResultJSON(nil, &r), &compact); err != nil {
			t.Fatalf("compact re-encoding does not decode: %v", err)
		}
		if !reflect.DeepEqual(plain, compact) {
			t.Errorf("compact %+v, plain %+v", compact, plain)
		}
	})
}
