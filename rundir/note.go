package rundir

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/inferload/inferload/record"
)

// AppendNote adds a manual annotation to a run's events.jsonl at the
// current offset of its run clock (recovered from the run_start event), so
// it lines up with the run's series even when written from another
// process while the run goes on. The line is written with one O_APPEND
// write, which does not interleave with the run's own appends.
func AppendNote(eventsPath, text string, now time.Time) (record.Event, error) {
	text = strings.TrimSpace(text)
	if text == "" {
		return record.Event{}, errors.New("note: the text is empty")
	}
	var info record.RunInfo
	if _, err := ReadEvents(eventsPath, func(e *record.Event) error {
		info.Apply(e)
		return nil
	}); err != nil {
		return record.Event{}, fmt.Errorf("note: %w", err)
	}
	if info.Started.IsZero() {
		return record.Event{}, fmt.Errorf("note: %s has no run_start event: not a run directory's events", eventsPath)
	}
	e := record.Event{TimeUS: max(now.Sub(info.Started).Microseconds(), 0), Kind: record.EventNote, Message: text}
	line, err := json.Marshal(e)
	if err != nil {
		return record.Event{}, fmt.Errorf("note: %w", err)
	}
	f, err := os.OpenFile(eventsPath, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return record.Event{}, fmt.Errorf("note: %w", err)
	}
	_, err = f.Write(append(line, '\n'))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return record.Event{}, fmt.Errorf("note: writing %s: %w", eventsPath, err)
	}
	return e, nil
}
