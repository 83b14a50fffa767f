package experiment

import (
	"fmt"

	"github.com/inferload/inferload/record"
	"github.com/inferload/inferload/rundir"
)

// WriteFailure is the error of a run whose files stopped being written
// (a full disk, a removed directory): issuing stopped at the first failed
// write, the requests in flight finished, and the summary could not come
// from the files, which are missing records. Summary is built instead from
// the live aggregate the recorder kept of every finished request (the same
// Aggregate and window rules Assemble uses, but without the telemetry,
// steps and verdicts that need the files): the best account there is, and
// labelled as such wherever it is shown.
type WriteFailure struct {
	Dir string
	Err error // the first write error
	// Finished is every request that finished; Missing how many of their
	// records are not in the records file (read back after the failure).
	Finished, Missing int64
	// Summary is from the live aggregate, not from the run directory.
	Summary *record.Summary
}

func (w *WriteFailure) Error() string {
	return fmt.Sprintf("writing run directory %s: %v (%d of %d records missing from %s; issuing stopped at the failed write)",
		w.Dir, w.Err, w.Missing, w.Finished, rundir.Records)
}

func (w *WriteFailure) Unwrap() error { return w.Err }

// writeFailure builds the WriteFailure of a run whose files failed.
func (r *runner) writeFailure(err error, interrupted bool) *WriteFailure {
	info := record.RunInfo{Name: r.p.Name, Mode: r.p.Load.Mode(), Started: r.start.UTC(),
		WarmupEndUS: r.runWarmupEndUS(), MeasureEndUS: r.measureUS, EndUS: r.endUS, Interrupted: interrupted}
	r.rec.mu.Lock()
	s := r.rec.agg.Summary(info)
	finished := r.rec.finished
	r.rec.mu.Unlock()
	var onDisk int64
	_, _ = rundir.ReadRecords(rundir.RecordsFile(r.dir), func(*record.Result) error {
		onDisk++
		return nil
	})
	return &WriteFailure{Dir: r.dir, Err: err, Finished: finished, Missing: max(finished-onDisk, 0), Summary: s}
}
