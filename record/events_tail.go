package record

import "sort"

// MaxEventsKept bounds the content-event offsets one record keeps
// (Result.EventsUS). A server that streams events as fast as it can would
// otherwise make one request hold gigabytes and write a record no reader
// accepts. 32,768 offsets are 256 KiB in memory and about 300 KB on the
// record's line; a reply longer than that is rare (reasoning models at
// max_tokens 32k) and keeps its later gaps in Result.EventsTail.
const MaxEventsKept = 32768

// tailDigits is the precision of a gap kept in an EventsTail: 3 significant
// decimal digits, as the latency histograms hold (DESIGN.md). It bounds the
// distinct gaps a tail can hold to 900 per decade, 8,700 over 1 µs – 1 h.
const tailDigits = 3

// EventsTail summarises the content events of a stream past MaxEventsKept:
// how many there were, when the last arrived, and every gap between
// consecutive events (from the last kept one on) as a count per gap rounded
// down to 3 significant digits. The ITL histogram records these gaps as it
// records the kept ones (Result.EachGap), so a capped stream still counts
// every gap; only the exact arrival time of each dropped event is lost.
type EventsTail struct {
	// Dropped counts the content events whose offsets were not kept.
	Dropped int `json:"dropped"`
	// LastUS is the offset of the last content event from the send time.
	LastUS int64 `json:"last_us"`
	// Gaps holds [gap µs, count] pairs in ascending order of gap.
	Gaps [][2]int64 `json:"gaps"`
}

// AddEvent appends the content event at offset us (from the send time) to
// events while fewer than MaxEventsKept are kept, and folds it into tail
// after that. It returns the events slice, which never grows past the cap.
func AddEvent(events []int64, tail *EventsTail, us int64) []int64 {
	if len(events) < MaxEventsKept {
		return append(events, us)
	}
	prev := tail.LastUS
	if tail.Dropped == 0 {
		prev = events[len(events)-1]
	}
	tail.Dropped++
	tail.LastUS = us
	tail.addGap(roundDigits(us-prev, tailDigits))
	return events
}

// addGap counts one gap, keeping Gaps sorted: at most a few thousand
// distinct values, each inserted once.
func (t *EventsTail) addGap(g int64) {
	i := sort.Search(len(t.Gaps), func(i int) bool { return t.Gaps[i][0] >= g })
	if i < len(t.Gaps) && t.Gaps[i][0] == g {
		t.Gaps[i][1]++
		return
	}
	t.Gaps = append(t.Gaps, [2]int64{})
	copy(t.Gaps[i+1:], t.Gaps[i:])
	t.Gaps[i] = [2]int64{g, 1}
}

// roundDigits rounds v down to d significant decimal digits (v ≥ 0;
// negative gaps, from a clock that stepped, are kept as 0).
func roundDigits(v int64, d int) int64 {
	if v <= 0 {
		return 0
	}
	unit := int64(1)
	for lim := pow10(d); v/unit >= lim; unit *= 10 {
	}
	return v - v%unit
}

func pow10(d int) int64 {
	p := int64(1)
	for range d {
		p *= 10
	}
	return p
}

// EachGap calls fn for every inter-token gap of the record: once per pair
// of consecutive kept events (n = 1), then for each gap of the tail with
// its count. It is the one walk over ITL gaps for everything that
// histograms them.
func (r *Result) EachGap(fn func(gapUS, n int64)) {
	for i := 1; i < len(r.EventsUS); i++ {
		fn(r.EventsUS[i]-r.EventsUS[i-1], 1)
	}
	if r.EventsTail != nil {
		for _, g := range r.EventsTail.Gaps {
			if g[1] > 0 {
				fn(g[0], g[1])
			}
		}
	}
}

// ContentEvents is the number of content events the stream carried: the
// kept offsets plus the tail's dropped ones.
func (r *Result) ContentEvents() int {
	n := len(r.EventsUS)
	if r.EventsTail != nil {
		n += r.EventsTail.Dropped
	}
	return n
}
