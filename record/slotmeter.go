package record

// slotMeter sums values per 100 ms slot of the run clock, so a rate can be
// taken over a window chosen only when the run ends, in bounded memory.
//
// A window's edges need fine slots only where they can fall: its start is
// the warm-up's end, early in the run, and its end is when issuing stopped,
// shortly before the last delivery (the drain after it lasts at most the
// grace period and a request's timeout). So the meter keeps the first hour
// and the latest one to two hours in 100 ms slots, and folds everything in
// between into one running sum: that middle is wholly inside any window
// whose edges lie in the fine parts. A day-long soak then holds at most
// 3 hours of slots per meter instead of 24. An edge that does fall in the
// folded middle (a warm-up over an hour, or a request log replayed with a
// huge gap) is prorated over the whole middle, an approximation.
//
// Values are added in record order; the live run and a rebuild add the same
// records in the same order, so both fold identically.
type slotMeter struct {
	width  int       // values per slot
	head   []float64 // slots [0, len(head)/width), at most headSlots
	mid    []float64 // the folded slots [headSlots, midEnd), summed
	midEnd int64     // first slot after the folded middle
	tail   []float64 // slots [midEnd, midEnd + len(tail)/width)
	// lastUS is the latest instant any value stands for: nothing lies
	// after it, so a window reaching it takes its slot's values whole.
	lastUS int64
}

const (
	// headSlots and tailSlots are an hour of slots each; the tail holds
	// up to twice that before its older half is folded.
	headSlots = 3600 * 1_000_000 / meterSlotUS
	tailSlots = 3600 * 1_000_000 / meterSlotUS
)

// slot returns the values of the slot holding instant us (the folded sum
// for the middle), or nil beyond the meter's reach.
func (m *slotMeter) slot(us int64, width int) []float64 {
	if m.width == 0 {
		m.width, m.midEnd, m.mid = width, headSlots, make([]float64, width)
	}
	i := max(us, 0) / meterSlotUS
	switch {
	case i >= maxMeterSlots:
		return nil
	case us > m.lastUS:
		m.lastUS = us
	}
	switch {
	case i < headSlots:
		m.head = growSlots(m.head, (i+1)*int64(m.width))
		return m.head[i*int64(m.width) : (i+1)*int64(m.width)]
	case i < m.midEnd:
		return m.mid
	}
	if i-m.midEnd >= 2*tailSlots {
		m.foldUntil(i - tailSlots + 1)
	}
	j := (i - m.midEnd) * int64(m.width)
	m.tail = growSlots(m.tail, j+int64(m.width))
	return m.tail[j : j+int64(m.width)]
}

// foldUntil folds the tail's slots before slot end into the middle.
func (m *slotMeter) foldUntil(end int64) {
	n := min((end-m.midEnd)*int64(m.width), int64(len(m.tail)))
	for k := int64(0); k < n; k++ {
		m.mid[k%int64(m.width)] += m.tail[k]
	}
	m.tail = append([]float64(nil), m.tail[n:]...) // release the folded part
	m.midEnd = end
}

// growSlots extends s with zeros to length n.
func growSlots(s []float64, n int64) []float64 {
	for int64(len(s)) < n {
		s = append(s, 0)
	}
	return s
}

// reach notes that values reach up to instant us (a busy span's end).
func (m *slotMeter) reach(us int64) {
	m.lastUS = max(m.lastUS, us)
}

// each calls fn with every part of the meter overlapping [fromUS, toUS]
// and the fraction of it inside. Deliveries are taken as spread evenly
// within a slot (or over the whole folded middle), up to the meter's last
// instant: a window that ends at or after it (a killed run's, which ends
// at its last completion) takes the last slot whole, the completion at
// its very end included.
//
// Example: replies done at 3.5 s and 7.5 s, window [0, 7.5 s]. The second
// sits alone in slot [7.5 s, 7.6 s); prorated over the slot it would count
// 0, but nothing lies after 7.5 s, so it counts 1: 2 requests in 7.5 s.
func (m *slotMeter) each(fromUS, toUS int64, fn func(f float64, v []float64)) {
	if m.width == 0 || toUS <= fromUS {
		return
	}
	w := int64(m.width)
	part := func(start, end int64, v []float64) {
		if toUS >= m.lastUS && m.lastUS < end {
			// The slot holding the last instant ends there: the window
			// covers everything in it that lies after its own start.
			end = m.lastUS + 1
			if overlap := end - max(start, fromUS); overlap > 0 {
				fn(float64(overlap)/float64(end-start), v)
			}
			return
		}
		if overlap := min(end, toUS) - max(start, fromUS); overlap > 0 {
			fn(float64(overlap)/float64(end-start), v)
		}
	}
	for i := int64(0); i < int64(len(m.head))/w; i++ {
		part(i*meterSlotUS, (i+1)*meterSlotUS, m.head[i*w:(i+1)*w])
	}
	if m.midEnd > headSlots {
		part(headSlots*meterSlotUS, m.midEnd*meterSlotUS, m.mid)
	}
	for j := int64(0); j < int64(len(m.tail))/w; j++ {
		i := m.midEnd + j
		part(i*meterSlotUS, (i+1)*meterSlotUS, m.tail[j*w:(j+1)*w])
	}
}

// spread adds v to value ch of the slot of each instant base+offsets[k].
// Consecutive events mostly share a slot, so the slot is looked up only
// when it changes: this runs once per stream event.
func (m *slotMeter) spread(base int64, offsets []int64, width, ch int, v float64) {
	last := int64(-1)
	var cur []float64
	for _, off := range offsets {
		us := base + off
		if i := max(us, 0) / meterSlotUS; i != last {
			cur, last = m.slot(us, width), i
		}
		if cur != nil {
			cur[ch] += v
		}
	}
}

// spreadEven adds v to channel ch spread evenly over [fromUS, toUS], slot
// by slot in proportion to the time each slot covers (all of v at fromUS
// when the span is empty).
func (m *slotMeter) spreadEven(fromUS, toUS int64, width, ch int, v float64) {
	if toUS <= fromUS {
		if cur := m.slot(fromUS, width); cur != nil {
			cur[ch] += v
		}
		return
	}
	span := float64(toUS - fromUS)
	for us := fromUS; us < toUS; {
		next := min((us/meterSlotUS+1)*meterSlotUS, toUS)
		if cur := m.slot(us, width); cur != nil {
			cur[ch] += v * float64(next-us) / span
		}
		us = next
	}
}
