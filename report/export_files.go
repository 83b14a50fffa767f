package report

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/inferload/inferload/record"
	"github.com/inferload/inferload/rundir"
)

// RecordsCSVFrom streams a records file (either form) to w as CSV, in file order,
// without holding the records in memory. Records a damaged file still
// holds are all written, as everywhere else records are read; the
// returned stats say what was skipped (rundir.ReadStats).
func RecordsCSVFrom(w io.Writer, recordsPath string) (rundir.ReadStats, error) {
	c := NewRecordsCSV(w)
	st, err := rundir.ReadRecords(recordsPath, c.Write)
	if err != nil {
		return st, err
	}
	return st, c.Flush()
}

// RecordsJSONLFrom streams a run's records file (compressed or plain) to
// w as plain JSON lines with absolute event offsets (events_us): the
// uncompressed records.jsonl of earlier runs, byte for byte the lines
// they held, for jq and every tool that reads JSON lines. The returned
// stats say what a damaged file lost.
func RecordsJSONLFrom(w io.Writer, recordsPath string) (rundir.ReadStats, error) {
	bw := bufio.NewWriterSize(w, 64<<10)
	var line []byte
	st, err := rundir.ReadRecords(recordsPath, func(r *record.Result) error {
		line = append(record.AppendResultJSON(line[:0], r), '\n')
		_, err := bw.Write(line)
		return err
	})
	if err != nil {
		return st, err
	}
	return st, bw.Flush()
}

// SeriesCSVFrom streams a series.jsonl file to w as CSV.
func SeriesCSVFrom(w io.Writer, seriesPath string) error {
	c := NewSeriesCSV(w)
	if _, err := rundir.ReadSeries(seriesPath, c.Write); err != nil {
		return err
	}
	return c.Flush()
}

// InfluxFrom streams a series.jsonl file to w as InfluxDB line protocol for
// the run named run that started at started (summary.json's name and
// started).
func InfluxFrom(w io.Writer, seriesPath, run string, started time.Time) error {
	s := NewInfluxSeries(w, run, started)
	_, err := rundir.ReadSeries(seriesPath, s.Write)
	return err
}

// WriteFile writes path through a buffer with fill, so a failed export
// leaves no half file behind: it writes to a temporary file in the same
// directory and renames it into place.
func WriteFile(path string, fill func(io.Writer) error) (err error) {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	bw := bufio.NewWriterSize(tmp, 64<<10)
	if err := fill(bw); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := tmp.Chmod(0o644); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}

// RecordsParquetFrom streams a records file (either form) to w as Parquet
// (RecordRow), in file order, holding at most a row group in memory. The
// returned stats say what a damaged file lost.
func RecordsParquetFrom(w io.Writer, recordsPath string) (rundir.ReadStats, error) {
	p := NewParquetWriter[RecordRow](w, "records")
	st, err := rundir.ReadRecords(recordsPath, func(r *record.Result) error {
		return p.Write(RecordRowOf(r))
	})
	if err != nil {
		return st, err
	}
	return st, p.Close()
}

// SeriesParquetFrom streams a series.jsonl file to w as Parquet (WindowRow).
func SeriesParquetFrom(w io.Writer, seriesPath string) error {
	p := NewParquetWriter[WindowRow](w, "series")
	if _, err := rundir.ReadSeries(seriesPath, func(win *record.Window) error {
		return p.Write(WindowRowOf(win))
	}); err != nil {
		return err
	}
	return p.Close()
}
