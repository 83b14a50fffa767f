package cli

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/inferload/inferload/record"
	"github.com/inferload/inferload/rundir"
)

// TestNote: `inferload note RUN_DIR TEXT` appends a note to events.jsonl;
// a directory that is not a run, or missing arguments, fail with the
// right exit code.
func TestNote(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	events := filepath.Join(dir, "events.jsonl")
	start := time.Now().Add(-2 * time.Second).UTC().Format(time.RFC3339Nano)
	writeFile(t, events, `{"time_us":0,"kind":"run_start","message":"`+start+`"}`+"\n")
	tests := []struct {
		args     []string
		code     int
		inStdout string
	}{
		{[]string{"note", dir, "switched to fp8"}, ExitOK, "switched to fp8"}, // a note at the current offset
		{[]string{"note", t.TempDir(), "x"}, ExitError, ""},                   // no events.jsonl: not a run directory
		{[]string{"note", dir}, ExitUsage, ""},                                // the text is required
	}
	for _, tt := range tests {
		code, stdout, stderr := runCLI(t, tt.args...)
		if code != tt.code || !strings.Contains(stdout, tt.inStdout) {
			t.Errorf("%v: code %d stdout %q stderr %q, want code %d", tt.args, code, stdout, stderr, tt.code)
		}
	}
	var notes []record.Event
	if _, err := rundir.ReadEvents(events, func(e *record.Event) error {
		if e.Kind == record.EventNote {
			notes = append(notes, *e)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if len(notes) != 1 || notes[0].Message != "switched to fp8" || notes[0].TimeUS < 2e6 {
		t.Fatalf("notes = %+v, want one at ≥2 s", notes)
	}
}
