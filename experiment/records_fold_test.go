package experiment

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/inferload/inferload/record"
	"github.com/inferload/inferload/rundir"
	"github.com/inferload/inferload/sim"
	"github.com/inferload/inferload/summary"
)

// TestFinishLiveReadsNoRecords: a run's end assembles its summary and
// report from the fold it fed as it wrote, not from the records read back:
// with the records file emptied after the fold was fed, summary.FinishLive still
// writes the run's own bytes. When the plan changed under the fold, or a
// spans file appeared, it falls back to reading the (now empty) file.
func TestFinishLiveReadsNoRecords(t *testing.T) {
	t.Parallel()
	url := tinySim(t, sim.Faults{})
	out, err := Run(context.Background(), testPlan(t, fmt.Sprintf(identityHead+"load: {concurrency: 2, requests: 12}\n", url)), Options{})
	if err != nil {
		t.Fatal(err)
	}
	dir := out.Dir
	read := func(name string) []byte {
		t.Helper()
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	sum, page := read(rundir.Summary), read(rundir.Report)

	fed := func() *summary.Live {
		t.Helper()
		fold, err := summary.NewLive(dir, false)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := rundir.ReadRecords(rundir.RecordsFile(dir), func(r *record.Result) error {
			fold.Add(r)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		return fold
	}
	fold := fed()
	records := read(rundir.Records)
	if err := os.WriteFile(filepath.Join(dir, rundir.Records), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	rb, err := summary.FinishLive(dir, fold)
	if err != nil {
		t.Fatal(err)
	}
	if rb.Summary.Requests.Succeeded != 12 || !bytes.Equal(read(rundir.Summary), sum) || !bytes.Equal(read(rundir.Report), page) {
		t.Errorf("from the fold with the records file empty: %d succeeded, summary same %v, report same %v",
			rb.Summary.Requests.Succeeded, bytes.Equal(read(rundir.Summary), sum), bytes.Equal(read(rundir.Report), page))
	}
	if got, err := summary.NewLive(dir, true); got != nil || err != nil {
		t.Errorf("a run listening for spans got a live fold (%v, %v); its spans are joined after the run", got, err)
	}

	changes := []struct {
		name   string
		change func()
		undo   func()
	}{
		{"plan changed", func() {
			if err := os.WriteFile(filepath.Join(dir, rundir.Plan), append(read(rundir.Plan), "# edited\n"...), 0o644); err != nil {
				t.Fatal(err)
			}
		}, nil},
		{"spans appeared", func() {
			if err := os.WriteFile(filepath.Join(dir, rundir.Spans), nil, 0o644); err != nil {
				t.Fatal(err)
			}
		}, func() { os.Remove(filepath.Join(dir, rundir.Spans)) }},
	}
	planRaw := read(rundir.Plan)
	for _, c := range changes {
		if err := os.WriteFile(filepath.Join(dir, rundir.Records), records, 0o644); err != nil {
			t.Fatal(err)
		}
		fold := fed()
		if err := os.WriteFile(filepath.Join(dir, rundir.Records), nil, 0o644); err != nil {
			t.Fatal(err)
		}
		c.change()
		rb, err := summary.FinishLive(dir, fold)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if n := rb.Summary.Requests.Succeeded; n != 0 {
			t.Errorf("%s: the summary counted %d requests from the fold; want the records read back (none left)", c.name, n)
		}
		if c.undo != nil {
			c.undo()
		}
		if err := os.WriteFile(filepath.Join(dir, rundir.Plan), planRaw, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
