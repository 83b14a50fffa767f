package schedule_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"

	"github.com/inferload/inferload/internal/ddtest"
	"github.com/inferload/inferload/schedule"
)

// TestDataDriven reads schedules as data: testdata/schedules/* hold stage
// lists, ramps and arrival processes and what they must produce. Refresh
// the expected outputs with
//
//	go test ./schedule/ -run DataDriven -rewrite
//
// and review the diff. Directives:
//
//	stages mode=closed|open
//	    input: load.stages items, one a line; prints each stage's
//	    Describe, or the error naming the item.
//	ramp from=F to=F duration=D [first=N]
//	    NewRampArrivals: the number of arrivals before the duration and
//	    the first N offsets (default 5).
//	arrivals kind=K rate=F seed=N [burstiness=F] [n=N]
//	    NewArrivals: the first N offsets (default 8), or the error.
func TestDataDriven(t *testing.T) {
	ddtest.Run(t, "testdata/schedules", map[string]ddtest.Case{
		"stages":   stagesCase,
		"ramp":     rampCase,
		"arrivals": arrivalsCase,
	})
}

func stagesCase(t *testing.T, d *datadriven.TestData) string {
	var mode string
	d.ScanArgs(t, "mode", &mode)
	var items []string
	for _, l := range strings.Split(d.Input, "\n") {
		if l != "" {
			items = append(items, l)
		}
	}
	stages, err := schedule.ParseStages(items, mode)
	if err != nil {
		var se *schedule.StageError
		if !errors.As(err, &se) {
			d.Fatalf(t, "error %v is not a *StageError", err)
		}
		return fmt.Sprintf("error at item %d: %v\n", se.Index, err)
	}
	var b strings.Builder
	for i, st := range stages {
		fmt.Fprintf(&b, "%d: %s\n", i, st.Describe())
	}
	return b.String()
}

// maxArrivals bounds a ramp that would never end.
const maxArrivals = 1_000_000

func rampCase(t *testing.T, d *datadriven.TestData) string {
	var from, to float64
	var durText string
	first := 5
	d.ScanArgs(t, "from", &from)
	d.ScanArgs(t, "to", &to)
	d.ScanArgs(t, "duration", &durText)
	d.MaybeScanArgs(t, "first", &first)
	dur, err := time.ParseDuration(durText)
	if err != nil {
		d.Fatalf(t, "duration: %v", err)
	}
	a := schedule.NewRampArrivals(from, to, dur)
	var offsets []string
	n := 0
	for prev := time.Duration(0); ; n++ {
		next := a.Next()
		if next >= dur {
			break
		}
		if next < prev {
			d.Fatalf(t, "arrival %d at %v went back in time from %v", n+1, next, prev)
		}
		if n == maxArrivals {
			d.Fatalf(t, "more than %d arrivals", maxArrivals)
		}
		prev = next
		if len(offsets) < first {
			offsets = append(offsets, next.Round(time.Microsecond).String())
		}
	}
	return fmt.Sprintf("arrivals before %v: %d\nfirst: %s\n", dur, n, strings.Join(offsets, " "))
}

func arrivalsCase(t *testing.T, d *datadriven.TestData) string {
	var kind string
	var rate, burstiness float64
	var seed uint64
	n := 8
	d.ScanArgs(t, "kind", &kind)
	d.ScanArgs(t, "rate", &rate)
	d.ScanArgs(t, "seed", &seed)
	d.MaybeScanArgs(t, "burstiness", &burstiness)
	d.MaybeScanArgs(t, "n", &n)
	a, err := schedule.NewArrivals(kind, rate, burstiness, seed)
	if err != nil {
		return "error: " + err.Error() + "\n"
	}
	offsets := make([]string, n)
	for i := range offsets {
		offsets[i] = a.Next().Round(time.Microsecond).String()
	}
	return strings.Join(offsets, " ") + "\n"
}
