package record

// maxFlowColumns bounds an OutputFlow's columns: past it, columns double
// in width and merge pairwise, so a day-long run keeps 32-second columns.
const maxFlowColumns = 4096

// OutputFlow is the output tokens delivered over the whole run clock,
// counted by the summary's throughput rule (deliverOutput): successful
// replies, warm-up included, their tokens at the instants they streamed
// in. A long reply's tokens thus land in the seconds they arrived, not in
// the second it completed, and the flow over the measured window is the
// summary's output_tokens_per_s.
//
// It is the throughput meter's rule in a different memory: the meter keeps
// fine slots only where the measured window's edges can fall and folds the
// hours between them, while a chart of throughput over time needs every
// stretch of the run, coarser. Its columns are a power of two seconds
// wide, at most maxFlowColumns of them.
//
// The zero value is an empty flow of one-second columns. Not safe for
// concurrent use.
type OutputFlow struct {
	widthS int64 // seconds per column, a power of two; 0 means 1
	cols   []float64
}

// Add folds one record in; only a success delivers tokens.
func (f *OutputFlow) Add(r *Result) {
	if r.OK() {
		deliverOutput(r, f)
	}
}

func (f *OutputFlow) atEvents(base int64, offsets []int64, per float64) {
	for _, off := range offsets {
		f.add(base+off, per)
	}
}

// spreadEven spreads total over [fromUS, toUS] second by second.
func (f *OutputFlow) spreadEven(fromUS, toUS int64, total float64) {
	if toUS <= fromUS {
		f.add(fromUS, total)
		return
	}
	for us := fromUS; us < toUS; {
		next := min((us/1e6+1)*1e6, toUS)
		f.add(us, total*float64(next-us)/float64(toUS-fromUS))
		us = next
	}
}

func (f *OutputFlow) add(us int64, v float64) {
	if f.widthS == 0 {
		f.widthS = 1
	}
	sec := max(us, 0) / 1e6
	col := sec / f.widthS
	for col >= maxFlowColumns {
		merged := make([]float64, (len(f.cols)+1)/2)
		for i, c := range f.cols {
			merged[i/2] += c
		}
		f.cols, f.widthS = merged, f.widthS*2
		col = sec / f.widthS
	}
	for int64(len(f.cols)) <= col {
		f.cols = append(f.cols, 0)
	}
	f.cols[col] += v
}

// PerSecond is the output tokens delivered in [fromS, toS) of the run
// clock per second, a column that straddles an edge prorated by its
// overlap; 0 for an empty span.
//
// Example: 100 tokens over ten events one second apart from 0.5 s read 10
// tokens/s over [0, 1) and over [0.5, 1.5), though the reply completed at
// 9.5 s.
func (f *OutputFlow) PerSecond(fromS, toS float64) float64 {
	if toS <= fromS || len(f.cols) == 0 {
		return 0
	}
	w := float64(f.widthS)
	var sum float64
	for i := max(int(fromS/w), 0); i < len(f.cols) && float64(i)*w < toS; i++ {
		start := float64(i) * w
		if overlap := min(start+w, toS) - max(start, fromS); overlap > 0 {
			sum += f.cols[i] * overlap / w
		}
	}
	return sum / (toS - fromS)
}
