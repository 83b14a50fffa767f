package record

import (
	"reflect"
	"testing"
)

// TestDecodeResultTakesWriterLines: every line our writer writes for a
// record without retries, chain steps or a capped tail takes the fast path,
// in both forms, and reads as encoding/json reads it.
func TestDecodeResultTakesWriterLines(t *testing.T) {
	t.Parallel()
	every := everyFieldSet()
	every.Attempts, every.Chain, every.EventsTail = nil, nil, nil
	recs := append([]Result{{}, every, {EventsUS: []int64{}}, {EventsUS: []int64{7, 3, -2}}}, randomRecords(200, 5)...)
	taken := 0
	for i := range recs {
		r := &recs[i]
		simple := r.Attempts == nil && r.Chain == nil && r.EventsTail == nil
		for _, line := range [][]byte{AppendResultJSON(nil, r), AppendCompactResultJSON(nil, r)} {
			var fast, slow Result
			ok := decodeResult(line, &fast)
			if err := slow.decodeJSON(line); err != nil {
				t.Fatalf("encoding/json refuses our own line %s: %v", line, err)
			}
			if simple && !ok {
				t.Errorf("fast path refused a line our writer wrote: %s", line)
			}
			if ok {
				taken++
				if !reflect.DeepEqual(fast, slow) {
					t.Errorf("line %s:\nfast %+v\nslow %+v", line, fast, slow)
				}
			}
		}
	}
	if taken < len(recs) {
		t.Errorf("fast path took %d of %d lines", taken, 2*len(recs))
	}
}

// TestDecodeResultRefuses: what the fast path leaves to encoding/json.
func TestDecodeResultRefuses(t *testing.T) {
	t.Parallel()
	for _, line := range []string{
		`{"id":1,"class":"a\"b"}`,    // an escape
		`{"id":1,"class":null}`,      // null
		`{"ID":1}`,                   // a key in another case
		`{"id":1,"id":2}`,            // a repeated key
		`{"id":1,"x":2}`,             // an unknown key
		`{"id":1.5}`,                 // not an integer
		`{"id":-1}`,                  // negative into uint64
		`{"id":1,"e2e_us":1e3}`,      // an exponent
		`{"id":01}`,                  // a leading zero
		`{"id":1234567890123456789}`, // past maxDigits
		`{"id":1,"events_us":[1],"events_dus":[1]}`, // both forms
		`{"id":1,"events_tail":{"dropped":1}}`,      // a nested value it does not read
		`{"id":1,"class":"` + "\xff" + `"}`,         // invalid UTF-8
		`{"id":1,"class":"` + "\t" + `"}`,           // a control character
		`{"id":1,}`, `{"id":1} x`, `{"id":1`, `[1]`, `{"server":{"prefill_us":1,"x":2}}`,
	} {
		var r Result
		if decodeResult([]byte(line), &r) {
			t.Errorf("fast path took %s", line)
		}
	}
}

// FuzzDecodeResult: whatever the fast path takes reads exactly as
// encoding/json reads it.
func FuzzDecodeResult(f *testing.F) {
	f.Add([]byte(`{"id":1,"send_us":5,"e2e_us":9,"events_dus":[250000,21337,-4,0],"stream":true,"server":{"prefill_us":3,"has_queue":true}}`))
	f.Add([]byte(` {"id":2, "events_us" : [3 ,5,9] ,"class":"é"} `))
	f.Add([]byte(`{"events_dus":[],"clock":"kernel","error":"timeout"}`))
	f.Add([]byte(`{"id":3,"events_b64":"AwMBAAABAQAJIREKYzp1fpQ2pr4g+g","stream":true}`))
	f.Add([]byte(`{"id":4,"events_b64":"AgICAg","events_us":[1]}`))
	f.Fuzz(func(t *testing.T, line []byte) {
		var fast, slow Result
		if !decodeResult(line, &fast) {
			return
		}
		if err := slow.decodeJSON(line); err != nil {
			t.Fatalf("fast path took %q, which encoding/json refuses: %v", line, err)
		}
		if !reflect.DeepEqual(fast, slow) {
			t.Errorf("%q:\nfast %+v\nslow %+v", line, fast, slow)
		}
	})
}

// BenchmarkDecodeRecord reads one 200-token compact record line, as a
// run's end reads every record back: path=fast is UnmarshalJSON (the fast
// path), path=json encoding/json alone.
func BenchmarkDecodeRecord(b *testing.B) {
	r := everyFieldSet()
	r.Attempts, r.Chain, r.EventsTail = nil, nil, nil
	r.EventsUS = make([]int64, 200)
	for i := range r.EventsUS {
		r.EventsUS[i] = 250000 + int64(i)*21337 + int64(i%7)*113
	}
	line := AppendCompactResultJSON(nil, &r)
	for _, bm := range []struct {
		name   string
		decode func(*Result, []byte) error
	}{{"path=fast", (*Result).UnmarshalJSON}, {"path=json", (*Result).decodeJSON}} {
		b.Run(bm.name, func(b *testing.B) {
			b.SetBytes(int64(len(line)))
			b.ReportAllocs()
			for b.Loop() {
				var got Result
				if err := bm.decode(&got, line); err != nil || len(got.EventsUS) != 200 {
					b.Fatal(err)
				}
			}
		})
	}
}
