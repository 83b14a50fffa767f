package summary

import (
	"bufio"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/inferload/inferload/analyze"
	"github.com/inferload/inferload/plan"
	"github.com/inferload/inferload/record"
	"github.com/inferload/inferload/report"
	"github.com/inferload/inferload/rundir"
)

// Rebuilt is what Rebuild recomputed, with what it had to tolerate.
type Rebuilt struct {
	Summary *record.Summary
	// Loss is what the records file is missing (a killed run, a full
	// disk, a cut or damaged file); the summary's first warning states it.
	Loss RecordsLoss
	// lastDoneUS is the latest completion among the records read.
	lastDoneUS int64
}

// Rebuild writes a run directory's summary.json and report.html from what
// the directory holds (Assemble). A live run finishes with it too, so
// `inferload report DIR` rewrites the very bytes the run wrote.
func Rebuild(dir string) (*Rebuilt, error) {
	digest := report.NewDigest()
	rb, err := assemble(dir, digest)
	if err != nil {
		return nil, err
	}
	if err := completeSeries(dir, rb.lastDoneUS); err != nil {
		return nil, err
	}
	return rb, writeSummaryReport(dir, rb, digest)
}

// completeSeries rewrites series.jsonl from the records when it stops
// short of the last completion among them. A live run writes a window
// once the newest completion is record.SeriesLagS past it, and the rest
// at its end, so a killed run's file misses its last seconds (all of
// them in a run killed in its first five) and a full disk's may be empty.
// The windows are cut from the records in file order by the same
// record.Series the live run fed in the same order, so they are the
// windows it would have written.
func completeSeries(dir string, lastDoneUS int64) error {
	path := filepath.Join(dir, rundir.Series)
	lastS := int64(-1)
	_, err := rundir.ReadSeries(path, func(w *record.Window) error {
		lastS = max(lastS, w.TS)
		return nil
	})
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("series of %s: %w", dir, err)
	}
	if lastS >= max(lastDoneUS, 0)/1e6 {
		return nil
	}
	return rundir.WriteFileAtomic(path, func(w io.Writer) error {
		bw := bufio.NewWriter(w)
		var werr error
		series := record.NewSeries(func(win record.Window) {
			line, err := json.Marshal(win)
			if err == nil {
				_, err = bw.Write(append(line, '\n'))
			}
			werr = cmp.Or(werr, err)
		})
		if _, err := rundir.ReadRecords(rundir.RecordsFile(dir), func(r *record.Result) error {
			series.Add(r)
			return werr
		}); err != nil {
			return err
		}
		series.Flush()
		return cmp.Or(werr, bw.Flush())
	})
}

// FinishLive is Rebuild at a live run's end from the fold it fed with
// every record it wrote, so the records are not read back; the same bytes
// as Rebuild (TestRebuildIsIdenticalForEveryCommand). Without a fold, or
// when the plan or design changed under it, it is Rebuild.
func FinishLive(dir string, f *Live) (*Rebuilt, error) {
	if f == nil || !f.stillCurrent(dir) {
		return Rebuild(dir)
	}
	rb, err := f.assemble(dir, f.p, f.d, rundir.ReadStats{})
	if err != nil {
		return nil, err
	}
	return rb, writeSummaryReport(dir, rb, f.digest)
}

// writeSummaryReport writes summary.json and report.html.
func writeSummaryReport(dir string, rb *Rebuilt, digest *report.Digest) error {
	if err := rundir.WriteSummary(filepath.Join(dir, rundir.Summary), rb.Summary); err != nil {
		return err
	}
	return writeReport(dir, rb.Summary, digest)
}

// applyThresholds evaluates the plan's thresholds into s.Thresholds.
func applyThresholds(s *record.Summary, p *plan.Plan) error {
	if len(p.Thresholds) == 0 {
		return nil
	}
	ths, err := p.Checks()
	if err != nil {
		return err
	}
	s.Thresholds, err = analyze.Evaluate(ths, s)
	s.ThresholdsAllowInvalid = p.AllowInvalid
	return err
}

// WriteReport draws report.html from the run directory's files and s (the
// summary just computed), so a live run and a rebuild draw the same page.
// Every record is read once more, into a bounded digest.
func WriteReport(dir string, s *record.Summary) error { return writeReport(dir, s, nil) }

// writeReport is WriteReport with the records' digest already built
// (nil: read the records for it).
func writeReport(dir string, s *record.Summary, digest *report.Digest) error {
	in := &report.HTMLInput{Summary: s, Digest: digest}
	if digest == nil {
		in.Digest = report.NewDigest()
		if _, err := rundir.ReadRecords(rundir.RecordsFile(dir), func(r *record.Result) error {
			in.Digest.Add(r)
			return nil
		}); err != nil {
			return fmt.Errorf("report of %s: %w", dir, err)
		}
	}
	if _, err := rundir.ReadSeries(filepath.Join(dir, rundir.Series), func(w *record.Window) error {
		in.Series = append(in.Series, *w)
		return nil
	}); err != nil {
		return fmt.Errorf("report of %s: %w", dir, err)
	}
	if _, err := rundir.ReadEvents(filepath.Join(dir, rundir.Events), func(e *record.Event) error {
		in.Events = append(in.Events, *e)
		return nil
	}); err != nil {
		return fmt.Errorf("report of %s: %w", dir, err)
	}
	if raw, err := os.ReadFile(filepath.Join(dir, rundir.Env)); err == nil {
		if err := json.Unmarshal(raw, &in.Env); err != nil {
			return fmt.Errorf("report of %s: %s: %w", dir, rundir.Env, err)
		}
	}
	samples, err := ReadTelemetry(dir)
	if err != nil {
		return fmt.Errorf("report of %s: %w", dir, err)
	}
	in.Telemetry = samples
	if in.Comparison, err = readComparison(dir); err != nil {
		return fmt.Errorf("report of %s: %w", dir, err)
	}
	return rundir.WriteFileAtomic(filepath.Join(dir, rundir.Report), func(w io.Writer) error { return report.WriteHTML(w, in) })
}

// readComparison reads compare.json, the comparison with a baseline that
// `inferload compare --embed` left in the run directory; nil when absent.
func readComparison(dir string) (*analyze.Comparison, error) {
	raw, err := os.ReadFile(filepath.Join(dir, rundir.Compare))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var c analyze.Comparison
	if err := json.Unmarshal(raw, &c); err != nil {
		return nil, fmt.Errorf("%s: %w", rundir.Compare, err)
	}
	return &c, nil
}

// EmbedComparison stores c in the current run's directory as compare.json
// and rewrites its report.html with the comparison after the headline.
func EmbedComparison(dir string, c *analyze.Comparison) error {
	s, err := rundir.ReadSummary(filepath.Join(dir, rundir.Summary))
	if err != nil {
		return err
	}
	b, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return fmt.Errorf("encoding the comparison: %w", err)
	}
	if err := rundir.WriteFileAtomic(filepath.Join(dir, rundir.Compare), func(w io.Writer) error {
		_, err := w.Write(append(b, '\n'))
		return err
	}); err != nil {
		return err
	}
	return WriteReport(dir, s)
}
