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
		if len(tt.r.EventsUS) > 0 && !strings.Contains(string(line), `"events_b64":"`) {
			t.Errorf("%s: compact line has no events_b64: %s", tt.name, line)
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
		// Two forms at once: which offsets are meant cannot be known.
		{"both forms", `{"id":1,"events_us":[1,2],"events_dus":[1,1]}`, errBothEventForms},
		{"plain and packed", `{"id":1,"events_us":[1,2],"events_b64":"AQIC"}`, errBothEventForms},
		{"deltas and packed", `{"id":1,"events_dus":[1,1],"events_b64":"AQIC"}`, errBothEventForms},
		// Packed values that are not the packed form.
		{"packed not base64", `{"id":1,"events_b64":"%%%"}`, errPacked},
		{"packed empty", `{"id":1,"events_b64":""}`, errPacked},
		{"packed width only", `{"id":1,"events_b64":"AQ"}`, errPacked},
		{"packed width 0", `{"id":1,"events_b64":"AAIC"}`, errPacked},
		{"packed width 9", `{"id":1,"events_b64":"CQIC"}`, errPacked},
		{"packed planes cut short", `{"id":1,"events_b64":"AgICAg"}`, errPacked},
		{"packed trailing bits set", `{"id":1,"events_b64":"AQJ"}`, errPacked},
		{"packed not a string", `{"id":1,"events_b64":[1]}`, nil},
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
	f.Add([]byte(`{"id":3,"events_b64":"AwMBAAABAQAJIREKYzp1fpQ2pr4g+g","stream":true}`))
	f.Add([]byte(`{"events_b64":"CP////////////////////////////////8"}`))
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

// TestPackedEvents: the packed form takes the fewest bytes the largest
// zigzag-coded delta needs, lays each delta's bytes out plane by plane,
// and reads back exactly, across every width.
func TestPackedEvents(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		events []int64
		want   string // the base64 value
		width  int
	}{
		// 1 and 2 → deltas 1, 1 → zigzag 2, 2: width 1, "\x01\x02\x02".
		{"one byte", []int64{1, 2}, "AQIC", 1},
		// A delta of -1 is zigzag 1.
		{"negative gap", []int64{5, 4}, "AQoB", 1},
		// 250 ms then a 21.337 ms gap: zigzag 500000 and 42674 need 3 bytes.
		{"three bytes", []int64{250000, 271337}, "", 3},
		{"eight bytes", []int64{math.MinInt64, math.MaxInt64}, "", 8},
	}
	for _, tt := range tests {
		line := string(appendEventsPacked(nil, tt.events))
		val := strings.TrimSuffix(strings.TrimPrefix(line, `,"events_b64":"`), `"`)
		raw, err := b64.DecodeString(val)
		if err != nil {
			t.Fatalf("%s: %s is not base64: %v", tt.name, val, err)
		}
		if int(raw[0]) != tt.width || len(raw) != 1+tt.width*len(tt.events) {
			t.Errorf("%s: width byte %d, %d bytes; want width %d", tt.name, raw[0], len(raw), tt.width)
		}
		if tt.want != "" && val != tt.want {
			t.Errorf("%s: packed %q, want %q", tt.name, val, tt.want)
		}
		got, err := unpackEvents([]byte(val))
		if err != nil || !reflect.DeepEqual(got, tt.events) {
			t.Errorf("%s: unpacked %v (%v), want %v", tt.name, got, err, tt.events)
		}
	}
	// Planes: the high bytes of all deltas come before the low bytes.
	raw, _ := b64.DecodeString(strings.TrimSuffix(strings.TrimPrefix(
		string(appendEventsPacked(nil, []int64{0x100, 0x300})), `,"events_b64":"`), `"`))
	if want := []byte{2, 0x02, 0x04, 0x00, 0x00}; !reflect.DeepEqual(raw, want) {
		t.Errorf("planes of 0x100, 0x300: % x, want % x", raw, want)
	}
}

// TestPackedEventsLong: more offsets than the writer's stack chunk holds
// still encode as one base64 value.
func TestPackedEventsLong(t *testing.T) {
	t.Parallel()
	events := make([]int64, 5000)
	for i := range events {
		events[i] = int64(i)*20000 + int64(i%7)*13
	}
	line := AppendCompactResultJSON(nil, &Result{EventsUS: events})
	var r Result
	if err := json.Unmarshal(line, &r); err != nil || !reflect.DeepEqual(r.EventsUS, events) {
		t.Fatalf("5,000 offsets: err %v, equal %v", err, reflect.DeepEqual(r.EventsUS, events))
	}
}

// TestDeltaRecordsStillRead: records.jsonl.zst of runs written before the
// packed form hold "events_dus"; they read back to the same offsets.
func TestDeltaRecordsStillRead(t *testing.T) {
	t.Parallel()
	var r Result
	line := `{"id":7,"send_us":0,"e2e_us":300000,"events_dus":[250000,21337,21337,-5],"stream":true,"input_tokens":1,"output_tokens":4}`
	if err := r.UnmarshalJSON([]byte(line)); err != nil {
		t.Fatal(err)
	}
	if want := []int64{250000, 271337, 292674, 292669}; !reflect.DeepEqual(r.EventsUS, want) {
		t.Errorf("events %v, want %v", r.EventsUS, want)
	}
}
