package record

import (
	"encoding/json"
	"math"
	"reflect"
	"testing"
)

// TestAppendResultJSONMatches: the reflection-free encoder produces exactly
// encoding/json's bytes, for every field (a field added to Result and not to
// AppendResultJSON fails the "every field set" row), every omitempty case
// and strings that need escaping.
func TestAppendResultJSONMatches(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		r    Result
	}{
		// The zero record: only the always-present fields appear.
		{"zero", Result{}},
		// Every field non-zero, set by reflection so new fields are covered.
		{"every field set", everyFieldSet()},
		// Extremes of the integer types.
		{"extremes", Result{ID: math.MaxUint64, SendUS: math.MinInt64, E2EUS: math.MaxInt64, EventsUS: []int64{math.MinInt64, 0, math.MaxInt64}, InputTokens: -1}},
		// Quotes, backslashes, control bytes, HTML characters, non-ASCII and invalid UTF-8.
		{"escaping", Result{Class: `a"b\c`, ErrorMsg: "line\nnext\t<b>&amp;</b> é \u2028 \xff", FinishReason: "stop"}},
		// An empty (non-nil) events slice is omitted like a nil one.
		{"empty events", Result{EventsUS: []int64{}}},
		// A tail without gaps (never built so, but decodable) and an empty one.
		{"tail nil gaps", Result{EventsTail: &EventsTail{Dropped: 1}}},
		{"tail empty gaps", Result{EventsTail: &EventsTail{Gaps: [][2]int64{}}}},
		// Server timings of zero (an idle llama.cpp's 0 ms prompt).
		{"zero server time", Result{Server: &ServerTime{}}},
	}
	for _, rr := range randomRecords(50, 9) {
		tests = append(tests, struct {
			name string
			r    Result
		}{"random", rr})
	}
	for _, tt := range tests {
		want, err := json.Marshal(&tt.r)
		if err != nil {
			t.Fatal(err)
		}
		if got := AppendResultJSON(nil, &tt.r); string(got) != string(want) {
			t.Errorf("%s:\n got %s\nwant %s", tt.name, got, want)
		}
	}
}

// everyFieldSet returns a Result with every exported field non-zero.
func everyFieldSet() Result {
	var r Result
	v := reflect.ValueOf(&r).Elem()
	for i := range v.NumField() {
		f := v.Field(i)
		switch f.Kind() {
		case reflect.Bool:
			f.SetBool(true)
		case reflect.Int, reflect.Int64:
			f.SetInt(int64(1000 + i))
		case reflect.Uint64:
			f.SetUint(uint64(1000 + i))
		case reflect.String:
			f.SetString("s" + v.Type().Field(i).Name)
		case reflect.Slice:
			if f.Type() == reflect.TypeFor[[]Attempt]() {
				f.Set(reflect.ValueOf([]Attempt{
					{SendUS: 1, EndUS: 2, Status: 429, Error: ErrHTTP429, RetryAfterUS: 3, WaitUS: 4},
					{SendUS: 5, EndUS: 6, Error: ErrTimeoutBeforeTTFT},
				}))
				continue
			}
			if f.Type() == reflect.TypeFor[[]ChainStep]() {
				f.Set(reflect.ValueOf([]ChainStep{
					{Name: "embed", Kind: "embeddings", SendUS: 1, TTFTUS: 2, DurUS: 3, Status: 200,
						InputTokens: 4, OutputTokens: 5, BytesIn: 6},
					{Name: "re\"trieve<", Kind: "http", SendUS: 7, DurUS: 8, Status: 503, Error: ErrHTTP5xx},
				}))
				continue
			}
			f.Set(reflect.ValueOf([]int64{int64(i), int64(i) * 7}))
		case reflect.Pointer:
			if f.Type() == reflect.TypeFor[*EventsTail]() {
				f.Set(reflect.ValueOf(&EventsTail{Dropped: 3, LastUS: 9000, Gaps: [][2]int64{{10, 2}, {120, 1}}}))
				continue
			}
			if f.Type() == reflect.TypeFor[*ServerTime]() {
				f.Set(reflect.ValueOf(&ServerTime{PrefillUS: 1, PromptN: 2, DecodeUS: 3, DecodeN: 4, QueueUS: 5, HasQueue: true}))
				continue
			}
			panic("everyFieldSet: unhandled pointer " + f.Type().String())
		default:
			panic("everyFieldSet: unhandled kind " + f.Kind().String())
		}
	}
	return r
}
