package rundir

import (
	"os"
	"path/filepath"
)

// The files of a run directory (DESIGN.md, "The run directory").
const (
	// Plan is the resolved plan, secrets redacted.
	Plan = "plan.yaml"
	// Experiment is what the command asked beyond the plan (experiment.Design).
	Experiment = "experiment.json"
	// Env is the environment: client host, target, GPUs, declared fields.
	Env = "env.json"
	// Records holds one record per request, appended as they finish, as
	// zstd-compressed JSON lines with each record's event offsets packed
	// (events_b64; older runs wrote deltas, events_dus). Find a
	// run's records with RecordsFile.
	Records = "records.jsonl.zst"
	// RecordsPlain is the uncompressed records file of runs written before
	// records were compressed (events_us absolute), and what
	// `inferload export --jsonl` prints. Every reader still reads it.
	RecordsPlain = "records.jsonl"
	// Series holds the per-second windows of client figures.
	Series = "series.jsonl"
	// Events holds the annotations on the run clock.
	Events = "events.jsonl"
	// Telemetry holds one line per source per sample (observe.Sample).
	Telemetry = "telemetry.jsonl"
	// Spans holds the OTLP trace spans the run received, one per line
	// (record.Span), when it listened for them (observe.otlp_listen).
	Spans = "spans.jsonl"
	// Summary is the aggregate (record.Summary).
	Summary = "summary.json"
	// Compare is a comparison with a baseline run, left by
	// `inferload compare --embed` and shown in the report.
	Compare = "compare.json"
	// Report is the self-contained HTML report.
	Report = "report.html"
	// Segment is a segment's tie to its distributed run: which segment it
	// is and its clock's measured offset from the collector's (distributed).
	Segment = "segment.json"
)

// RecordsFile is the path of the records in run directory dir: Records, or
// RecordsPlain in a run written before records were compressed. When
// neither exists it is Records, so the error of opening it names the file
// a run writes today.
func RecordsFile(dir string) string {
	path := filepath.Join(dir, Records)
	if _, err := os.Stat(path); err == nil {
		return path
	}
	plain := filepath.Join(dir, RecordsPlain)
	if _, err := os.Stat(plain); err == nil {
		return plain
	}
	return path
}
