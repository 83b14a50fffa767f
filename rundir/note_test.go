package rundir

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/inferload/inferload/record"
)

// TestAppendNote: a note lands at the run-clock offset of "now", after the
// lines already there; bad input is an error naming the problem.
func TestAppendNote(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "events.jsonl")
	start := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	w, err := NewJSONLWriter(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(record.Event{Kind: record.EventRunStart, Message: start.Format(time.RFC3339Nano)}); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	e, err := AppendNote(path, "  restarted the server ", start.Add(90*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	var got []record.Event
	if _, err := ReadEvents(path, func(e *record.Event) error { got = append(got, *e); return nil }); err != nil {
		t.Fatal(err)
	}
	if e.TimeUS != 90e6 || len(got) != 2 || got[1] != e || got[1].Message != "restarted the server" {
		t.Fatalf("note %+v, events %+v", e, got)
	}
	tests := []struct{ path, text, want string }{
		{path, "   ", "empty"},                                // nothing to say
		{filepath.Join(dir, "missing.jsonl"), "x", "missing"}, // not a run directory
		{writeFile(t, "{}\n"), "x", "run_start"},              // events without a clock
	}
	for _, tt := range tests {
		if _, err := AppendNote(tt.path, tt.text, start); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("AppendNote(%s, %q) err = %v, want %q", tt.path, tt.text, err, tt.want)
		}
	}
}
