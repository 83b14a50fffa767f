package summary

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/inferload/inferload/record"
	"github.com/inferload/inferload/rundir"
)

// FlushInterval is how often a run's files reach the OS, so what a
// SIGKILL can lose: the records of requests that finished in the last
// FlushInterval before the kill (rundir's writer; measured in
// cmd/inferload/cli's TestSIGKILLLosesUnderASecond).
const FlushInterval = rundir.FlushInterval

// RecordsLoss is what a run directory's records file is missing, as far
// as the directory can tell.
type RecordsLoss struct {
	// File is the records file's name (rundir.Records, or RecordsPlain in
	// an older run).
	File string
	// Finished is how many records the run wrote, from its run_end event;
	// 0 when unknown (a killed run, or one written before runs counted).
	Finished int64
	// Read is how many records were read back.
	Read int64
	// Missing counts the records known lost: Finished − Read when
	// Finished is known, else those the line counts in the records file
	// account for (rundir.ReadStats.Missing).
	Missing int64
	// DroppedBytes are the bytes of the records file that held no record
	// read: junk, a frame that does not decode, the tail of a cut one.
	DroppedBytes int64
	// Cut: the records file ends inside a frame or a line.
	Cut bool
	// Killed: events.jsonl has no run_end, so the run never ended (killed,
	// or its machine lost): records that finished in its last
	// FlushInterval may be missing, uncounted.
	Killed bool
}

// recordsLoss compares what the run said it wrote with what was read.
func recordsLoss(dir string, end runEnd, read int, st rundir.ReadStats) RecordsLoss {
	l := RecordsLoss{File: filepath.Base(rundir.RecordsFile(dir)), Finished: end.records, Read: int64(read), DroppedBytes: st.DroppedBytes,
		Cut: st.Truncated > 0, Killed: !end.seen}
	if l.Finished > 0 {
		l.Missing = max(l.Finished-l.Read, 0)
	} else {
		l.Missing = st.Missing
	}
	return l
}

// Lost reports whether records are, or may be, missing: some are known
// lost, the run was killed, or the file is damaged and the run's own
// count cannot say whether anything is missing.
func (l RecordsLoss) Lost() bool {
	return l.Missing > 0 || l.Killed || (l.Finished == 0 && (l.DroppedBytes > 0 || l.Cut))
}

// String states the loss in one sentence, as the summary's warnings are
// written ("" when the file is whole).
func (l RecordsLoss) String() string {
	var parts []string
	switch {
	case l.Missing > 0 && l.Finished > 0:
		parts = append(parts, fmt.Sprintf("%d of the %d records the run wrote are missing from %s", l.Missing, l.Finished, l.File))
	case l.Missing > 0:
		parts = append(parts, fmt.Sprintf("at least %d records are missing from %s (counted from its frames' line counts)", l.Missing, l.File))
	}
	if l.DroppedBytes > 0 {
		parts = append(parts, fmt.Sprintf("%d bytes of %s held no readable record and were skipped", l.DroppedBytes, l.File))
	} else if l.Cut && !l.Killed {
		parts = append(parts, fmt.Sprintf("%s ends inside a frame or line", l.File))
	}
	if l.Killed {
		parts = append(parts, fmt.Sprintf("the run was killed before it ended (no run_end event): the records of requests that finished in its last %v may be missing, uncounted",
			FlushInterval))
	}
	if len(parts) == 0 {
		return ""
	}
	s := strings.Join(parts, "; ")
	if l.Finished > 0 && l.Missing == 0 {
		s += fmt.Sprintf(" (all %d records the run wrote were read)", l.Finished)
	}
	return s
}

// LossOf says what run directory dir's records file is missing, from
// what reading it found (st, from rundir.ReadRecords) and the run's
// run_end event: what `inferload export` checks after writing every
// record it read. Without an events.jsonl (a records file alone) only the
// file's own damage counts.
func LossOf(dir string, st rundir.ReadStats) (RecordsLoss, error) {
	var end runEnd
	_, err := rundir.ReadEvents(filepath.Join(dir, rundir.Events), func(e *record.Event) error {
		if e.Kind == record.EventRunEnd {
			end = runEnd{seen: true, records: e.Records}
		}
		return nil
	})
	if errors.Is(err, fs.ErrNotExist) {
		end.seen = true // nothing says the run did not end
	} else if err != nil {
		return RecordsLoss{}, fmt.Errorf("reading events of %s: %w", dir, err)
	}
	return recordsLoss(dir, end, st.Values, st), nil
}
