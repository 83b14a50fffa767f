package record

// maxDeliverySeconds bounds Deliveries' per-second slices (7 days), so a
// garbled record cannot allocate without bound.
const maxDeliverySeconds = 7 * 24 * 3600

// Deliveries adds up, per whole second of the run clock, the successful
// requests that completed and the output tokens that arrived, warm-up
// included (what the server did in a second does not depend on who sent
// it), by throughput's rules: a request counts when it finished, its
// tokens when they arrived (deliverOutput). Unlike OutputFlow its
// seconds never merge: compare resamples them one by one.
type Deliveries struct {
	requests, tokens []float64
}

// Add counts one record; only a success delivers.
func (d *Deliveries) Add(r *Result) {
	if !r.OK() {
		return
	}
	if s := d.slot(r.DoneUS()); s >= 0 {
		d.requests[s]++
	}
	deliverOutput(r, d)
}

func (d *Deliveries) atEvents(base int64, offsets []int64, per float64) {
	for _, off := range offsets {
		if s := d.slot(base + off); s >= 0 {
			d.tokens[s] += per
		}
	}
}

func (d *Deliveries) spreadEven(fromUS, toUS int64, total float64) {
	if toUS <= fromUS {
		if s := d.slot(fromUS); s >= 0 {
			d.tokens[s] += total
		}
		return
	}
	for us := fromUS; us < toUS; {
		next := min((us/1e6+1)*1e6, toUS)
		if s := d.slot(us); s >= 0 {
			d.tokens[s] += total * float64(next-us) / float64(toUS-fromUS)
		}
		us = next
	}
}

// slot returns the index of the second holding us, growing the slices;
// -1 when out of range.
func (d *Deliveries) slot(us int64) int {
	if us < 0 || us/1_000_000 >= maxDeliverySeconds {
		return -1
	}
	i := int(us / 1_000_000)
	for len(d.requests) <= i {
		d.requests = append(d.requests, 0)
		d.tokens = append(d.tokens, 0)
	}
	return i
}

// Window returns the per-second values of the whole seconds inside
// [fromUS, toUS]: a partial second at either edge would read as a dip.
func (d *Deliveries) Window(fromUS, toUS int64) (requests, tokens []float64) {
	first := int((fromUS + 999_999) / 1_000_000)
	last := int(toUS / 1_000_000) // exclusive
	for i := max(first, 0); i < last; i++ {
		if i < len(d.requests) {
			requests = append(requests, d.requests[i])
			tokens = append(tokens, d.tokens[i])
		} else {
			requests = append(requests, 0)
			tokens = append(tokens, 0)
		}
	}
	return requests, tokens
}
