package schedule

import (
	"strings"
	"testing"
	"time"

	"github.com/inferload/inferload/record"
)

func TestParseStages(t *testing.T) {
	t.Parallel()
	tests := []struct {
		items []string
		mode  string
		want  []Stage
		err   string
	}{
		// A step then a ramp from it: the ramp starts where the step left off.
		{[]string{"30s@8", "ramp 1m@32"}, record.ModeClosed, []Stage{
			{Kind: record.StepConstant, Mode: record.ModeClosed, Duration: 30 * time.Second, Target: 8},
			{Kind: record.StepRamp, Mode: record.ModeClosed, Duration: time.Minute, From: 8, Target: 32},
		}, ""},
		// A first ramp starts from 0; open-loop loads may be fractional.
		{[]string{" ramp 10s @ 2.5 "}, record.ModeOpen, []Stage{
			{Kind: record.StepRamp, Mode: record.ModeOpen, Duration: 10 * time.Second, Target: 2.5},
		}, ""},
		// Half a user is not a user.
		{[]string{"30s@2.5"}, record.ModeClosed, nil, "whole number of users"},
		// The separator is required, and the error names the item and its index.
		{[]string{"30s@8", "30s 8"}, record.ModeClosed, nil, `load.stages[1] "30s 8": want DURATION@LOAD`},
		// Durations must be positive.
		{[]string{"0s@8"}, record.ModeClosed, nil, "not a positive duration"},
		// Loads must be positive numbers.
		{[]string{"30s@-1"}, record.ModeOpen, nil, "want a number above 0"},
		{[]string{"30s@NaN"}, record.ModeOpen, nil, "want a number above 0"},
	}
	for _, tt := range tests {
		got, err := ParseStages(tt.items, tt.mode)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("%q: err = %v, want %q", tt.items, err, tt.err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%q: %v", tt.items, err)
		}
		if len(got) != len(tt.want) {
			t.Fatalf("%q: got %+v", tt.items, got)
		}
		for i := range got {
			if got[i] != tt.want[i] {
				t.Errorf("%q[%d] = %+v, want %+v", tt.items, i, got[i], tt.want[i])
			}
		}
	}
}

func TestRampArrivals(t *testing.T) {
	t.Parallel()
	tests := []struct {
		r0, r1 float64
		d      time.Duration
		count  int           // arrivals before d
		first  time.Duration // offset of the first arrival
	}{
		// 0 → 10/s over 10 s: 50 arrivals (the area), the first at √2 s.
		{0, 10, 10 * time.Second, 49, 1414213562},
		// A flat "ramp" is a constant rate: 5/s for 2 s gives arrivals at 0.2 s … 1.8 s.
		{5, 5, 2 * time.Second, 9, 200 * time.Millisecond},
		// Falling 10 → 0 over 2 s: area 10, the first at (10 − √(100−10))/5 s.
		{10, 0, 2 * time.Second, 9, 102633404},
	}
	for _, tt := range tests {
		a := NewRampArrivals(tt.r0, tt.r1, tt.d)
		first := a.Next()
		n := 1
		for prev := first; ; n++ {
			next := a.Next()
			if next >= tt.d {
				break
			}
			if next < prev {
				t.Fatalf("%v→%v: arrivals went back in time: %v after %v", tt.r0, tt.r1, next, prev)
			}
			prev = next
		}
		if diff := first - tt.first; diff < -time.Microsecond || diff > time.Microsecond {
			t.Errorf("%v→%v: first arrival %v, want %v", tt.r0, tt.r1, first, tt.first)
		}
		if n != tt.count {
			t.Errorf("%v→%v: %d arrivals before %v, want %d", tt.r0, tt.r1, n, tt.d, tt.count)
		}
	}
}
