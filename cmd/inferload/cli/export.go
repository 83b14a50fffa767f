package cli

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/inferload/inferload/live"
	"github.com/inferload/inferload/record"
	"github.com/inferload/inferload/report"
	"github.com/inferload/inferload/rundir"
	"github.com/inferload/inferload/summary"
)

// influxTokenEnv names the environment variable holding an InfluxDB API
// token: secrets never go on the command line, where ps and shell history
// would show them.
const influxTokenEnv = "INFERLOAD_INFLUX_TOKEN"

// What `--csv` and `--parquet` export: records or series.
const (
	whatRecords = "records"
	whatSeries  = "series"
)

// tableExport is one file run/report write into the run directory with
// --csv or --parquet.
type tableExport struct {
	file, what string
	export     func(w io.Writer, dir, what string) error
}

var (
	csvExports = []tableExport{
		{"records.csv", whatRecords, exportCSV},
		{"series.csv", whatSeries, exportCSV},
	}
	parquetExports = []tableExport{
		{"records.parquet", whatRecords, exportParquet},
		{"series.parquet", whatSeries, exportParquet},
	}
)

func newExportCmd(st *State) *cobra.Command {
	var csvWhat, parquetWhat, influxURL string
	var junit, influx, jsonl bool
	c := &cobra.Command{
		Use:   "export RUN_DIR",
		Short: "Print a run directory's records as JSON lines, its records or series as CSV or Parquet, its thresholds as JUnit XML, or its series as InfluxDB line protocol",
		Long: `Export what a run directory holds to other tools, on stdout:

  inferload export runs/X --jsonl > records.jsonl       every record as a plain JSON line
  inferload export runs/X --csv records > records.csv   one row per request
  inferload export runs/X --csv series  > series.csv    one row per second
  inferload export runs/X --parquet records > records.parquet   every record field, token offsets as a list
  inferload export runs/X --parquet series  > series.parquet
  inferload export runs/X --junit > thresholds.xml      thresholds as JUnit test cases
  inferload export runs/X --influx > series.lp          series as InfluxDB line protocol
  inferload export runs/X --influx-url 'http://127.0.0.1:8086/api/v2/write?org=o&bucket=b'

--influx-url posts the line protocol to an InfluxDB write endpoint, with
the token from $INFERLOAD_INFLUX_TOKEN when set. See docs/exports.md.`,
		Args: cobra.ExactArgs(1),
	}
	c.Flags().StringVar(&csvWhat, "csv", "", "print records or series as CSV")
	c.Flags().StringVar(&parquetWhat, "parquet", "", "print records or series as Parquet (zstd)")
	c.Flags().BoolVar(&jsonl, "jsonl", false, "print the records as plain JSON lines, event offsets absolute (events_us)")
	c.Flags().BoolVar(&junit, "junit", false, "print the thresholds' verdicts as JUnit XML")
	c.Flags().BoolVar(&influx, "influx", false, "print the series as InfluxDB line protocol")
	c.Flags().StringVar(&influxURL, "influx-url", "", "post the series as line protocol to this InfluxDB write URL")
	c.RunE = func(cmd *cobra.Command, args []string) error {
		chosen := 0
		for _, on := range []bool{jsonl, csvWhat != "", parquetWhat != "", junit, influx, influxURL != ""} {
			if on {
				chosen++
			}
		}
		if chosen != 1 {
			return usageErrorf("choose exactly one of --jsonl, --csv records|series, --parquet records|series, --junit, --influx, --influx-url")
		}
		dir := args[0]
		switch {
		case jsonl:
			return exportRecords(st, dir, report.RecordsJSONLFrom)
		case csvWhat == whatRecords:
			return exportRecords(st, dir, report.RecordsCSVFrom)
		case parquetWhat == whatRecords:
			return exportRecords(st, dir, report.RecordsParquetFrom)
		case csvWhat != "":
			return exportCSV(st.Stdout, dir, csvWhat)
		case parquetWhat != "":
			return exportParquet(st.Stdout, dir, parquetWhat)
		case junit:
			return exportJUnit(st.Stdout, dir)
		case influx:
			return exportInflux(cmd.Context(), st, dir, "-")
		}
		return exportInflux(cmd.Context(), st, dir, influxURL)
	}
	return c
}

// exportRecords prints dir's records with export: every record the file
// still holds, then ExitRecordsLost when records are missing (a killed
// run, a full disk, a cut or damaged file), saying how many.
func exportRecords(st *State, dir string, export func(io.Writer, string) (rundir.ReadStats, error)) error {
	read, err := export(st.Stdout, rundir.RecordsFile(dir))
	if err != nil {
		return err
	}
	loss, err := summary.LossOf(dir, read)
	if err != nil {
		return err
	}
	if msg := loss.String(); msg != "" && !loss.Lost() {
		fmt.Fprintf(st.Stderr, "note: %s\n", msg)
	}
	return recordsLost(dir, loss)
}

// exportCSV prints records or series of dir as CSV. A run and a report
// state their own records' loss, so none is checked here.
func exportCSV(w io.Writer, dir, what string) error {
	switch what {
	case whatRecords:
		_, err := report.RecordsCSVFrom(w, rundir.RecordsFile(dir))
		return err
	case whatSeries:
		return report.SeriesCSVFrom(w, filepath.Join(dir, rundir.Series))
	}
	return usageErrorf("--csv: %q is not one of %s, %s", what, whatRecords, whatSeries)
}

// exportParquet writes records or series of dir as Parquet; as exportCSV,
// no loss is checked.
func exportParquet(w io.Writer, dir, what string) error {
	switch what {
	case whatRecords:
		_, err := report.RecordsParquetFrom(w, rundir.RecordsFile(dir))
		return err
	case whatSeries:
		return report.SeriesParquetFrom(w, filepath.Join(dir, rundir.Series))
	}
	return usageErrorf("--parquet: %q is not one of %s, %s", what, whatRecords, whatSeries)
}

// exportJUnit prints the thresholds of dir's summary.json as JUnit XML.
func exportJUnit(w io.Writer, dir string) error {
	s, err := rundir.ReadSummary(filepath.Join(dir, rundir.Summary))
	if err != nil {
		return err
	}
	return report.WriteJUnit(w, s)
}

// exportInflux sends dir's series as line protocol to dest: "-" is stdout,
// an http(s) URL an InfluxDB write endpoint, anything else a file.
func exportInflux(ctx context.Context, st *State, dir, dest string) error {
	s, err := rundir.ReadSummary(filepath.Join(dir, rundir.Summary))
	if err != nil {
		return err
	}
	return writeInflux(ctx, st, dir, s, dest)
}

func writeInflux(ctx context.Context, st *State, dir string, s *record.Summary, dest string) error {
	series := filepath.Join(dir, rundir.Series)
	fill := func(w io.Writer) error { return report.InfluxFrom(w, series, s.Name, s.Started) }
	switch {
	case dest == "-":
		return fill(st.Stdout)
	case strings.HasPrefix(dest, "http://") || strings.HasPrefix(dest, "https://"):
		var buf bytes.Buffer
		if err := fill(&buf); err != nil {
			return err
		}
		ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		return live.PostInflux(ctx, dest, st.Getenv(influxTokenEnv), buf.Bytes())
	}
	return report.WriteFile(dest, fill)
}

// exportFlags are the exports run and report can write when they finish.
type exportFlags struct {
	csv       bool
	parquet   bool
	junit     string
	influxOut string
}

func (f *exportFlags) bind(c *cobra.Command) {
	c.Flags().BoolVar(&f.csv, "csv", false, "also write records.csv and series.csv into the run directory")
	c.Flags().BoolVar(&f.parquet, "parquet", false, "also write records.parquet and series.parquet into the run directory")
	c.Flags().StringVar(&f.junit, "junit", "", "write the thresholds' verdicts as JUnit XML to this file")
	c.Flags().StringVar(&f.influxOut, "influx-out", "", "write the series as InfluxDB line protocol to this file, or post it to this http(s) write URL")
}

// write produces the chosen exports of the finished run in dir.
func (f *exportFlags) write(ctx context.Context, st *State, dir string, s *record.Summary) error {
	var tables []tableExport
	if f.csv {
		tables = append(tables, csvExports...)
	}
	if f.parquet {
		tables = append(tables, parquetExports...)
	}
	for _, t := range tables {
		err := report.WriteFile(filepath.Join(dir, t.file), func(w io.Writer) error { return t.export(w, dir, t.what) })
		if err != nil {
			return err
		}
	}
	if f.junit != "" {
		if err := report.WriteFile(f.junit, func(w io.Writer) error { return report.WriteJUnit(w, s) }); err != nil {
			return err
		}
	}
	if f.influxOut != "" {
		if err := writeInflux(ctx, st, dir, s, f.influxOut); err != nil {
			return fmt.Errorf("--influx-out: %w", err)
		}
	}
	return nil
}
