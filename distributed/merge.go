// Package dist runs one test from several machines: the segments a plan is
// cut into (schedule.Segment), and the merge of the segments' run
// directories into one, summarised once from all their records by the same
// assembly a single-process run uses (summary.Assemble).
package distributed

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/inferload/inferload/observe"
	"github.com/inferload/inferload/plan"
	"github.com/inferload/inferload/record"
	"github.com/inferload/inferload/rundir"
	"github.com/inferload/inferload/schedule"
	"github.com/inferload/inferload/summary"
)

// Merged is what Merge wrote.
type Merged struct {
	Dir     string
	Summary *record.Summary
	// OffsetBound is the largest difference between the segments' starts:
	// how far apart their clocks were aligned (each segment's records are
	// moved onto the earliest start).
	OffsetBound time.Duration
	// ClockError bounds the error of that alignment: half the longest
	// round trip of the segments' clock measurements against the
	// collector (0 when merged offline, where each machine's clock is
	// taken as it was).
	ClockError time.Duration
	// Truncated counts segments whose last record line was cut short (a
	// killed process); that line is lost, the rest merged.
	Truncated int
}

// shard is one segment's run directory.
type shard struct {
	dir      string
	seg      schedule.Segment
	plan     *plan.Plan
	started  time.Time
	offsetUS int64       // its run clock's zero on the merged clock
	clock    ClockOffset // its clock's measured offset from the collector's (zero offline)
	sawEnd   bool
}

// Merge combines the run directories of the N segments of one run (the same
// plan, load.segment 0/N … N-1/N) into a new run directory under outParent,
// named like a run: every record and event moved onto one clock (the
// earliest segment's start), the segments' stage windows combined, and the
// summary, steps, verdicts and report computed once from all the records,
// exactly as for a single-process run. Percentiles come from the merged
// records, never from averaging the segments'.
func Merge(dirs []string, outParent string) (*Merged, error) {
	shards, err := loadShards(dirs)
	if err != nil {
		return nil, err
	}
	base := shards[0]
	merged := *base.plan
	merged.Load.Segment = ""
	merged.Output.Dir = outParent
	out, err := rundir.Create(outParent, merged.Name, shards[0].started)
	if err != nil {
		return nil, err
	}
	if err := writeHeader(out, &merged, shards); err != nil {
		return nil, err
	}
	truncated, err := mergeRecords(out, shards)
	if err != nil {
		return nil, err
	}
	if err := mergeEvents(out, shards); err != nil {
		return nil, err
	}
	if err := mergeTelemetry(out, shards); err != nil {
		return nil, err
	}
	if err := mergeSpans(out, shards); err != nil {
		return nil, err
	}
	rb, err := summary.Rebuild(out)
	if err != nil {
		return nil, err
	}
	return &Merged{Dir: out, Summary: rb.Summary, OffsetBound: offsetBound(shards), ClockError: clockError(shards), Truncated: truncated}, nil
}

// loadShards reads and checks the segments: one of each of N, of the same
// plan and experiment, ordered by segment.
func loadShards(dirs []string) ([]*shard, error) {
	if len(dirs) == 0 {
		return nil, fmt.Errorf("merge: no run directories")
	}
	var shards []*shard
	for _, dir := range dirs {
		sh, err := loadShard(dir)
		if err != nil {
			return nil, err
		}
		shards = append(shards, sh)
	}
	slices.SortFunc(shards, func(a, b *shard) int { return a.seg.Index - b.seg.Index })
	n := shards[0].seg.Count
	for i, sh := range shards {
		switch {
		case sh.seg.Whole():
			return nil, fmt.Errorf("merge: %s is not a segment of a run (no load.segment)", sh.dir)
		case sh.seg.Count != n:
			return nil, fmt.Errorf("merge: %s is segment %s but %s is of %d", sh.dir, sh.seg, shards[0].dir, n)
		case i > 0 && sh.seg.Index == shards[i-1].seg.Index:
			return nil, fmt.Errorf("merge: %s and %s are both segment %s", shards[i-1].dir, sh.dir, sh.seg)
		}
	}
	if len(shards) != n {
		return nil, fmt.Errorf("merge: %d of the %d segments given (%s); every segment is needed for the whole run", len(shards), n, segmentList(shards))
	}
	if err := samePlan(shards); err != nil {
		return nil, err
	}
	first := slices.MinFunc(shards, func(a, b *shard) int { return a.started.Compare(b.started) }).started
	for _, sh := range shards {
		sh.offsetUS = sh.started.Sub(first).Microseconds()
	}
	return shards, nil
}

func loadShard(dir string) (*shard, error) {
	p, err := summary.ReadPlan(dir)
	if err != nil {
		return nil, fmt.Errorf("merge: %w", err)
	}
	seg, err := schedule.ParseSegment(p.Load.Segment)
	if err != nil {
		return nil, fmt.Errorf("merge: %s: load.segment %w", dir, err)
	}
	sh := &shard{dir: dir, seg: seg, plan: p}
	var info record.RunInfo
	if _, err := rundir.ReadEvents(filepath.Join(dir, rundir.Events), func(e *record.Event) error {
		info.Apply(e)
		sh.sawEnd = sh.sawEnd || e.Kind == record.EventRunEnd
		return nil
	}); err != nil {
		return nil, fmt.Errorf("merge: %s: %w", dir, err)
	}
	if info.Started.IsZero() {
		return nil, fmt.Errorf("merge: %s has no run_start event: the segment never started", dir)
	}
	sh.started = info.Started
	if raw, err := os.ReadFile(filepath.Join(dir, rundir.Segment)); err == nil {
		var si SegmentInfo
		if err := json.Unmarshal(raw, &si); err != nil {
			return nil, fmt.Errorf("merge: %s: %s: %w", dir, rundir.Segment, err)
		}
		// On the collector's clock: this machine's own plus its measured offset.
		sh.started, sh.clock = sh.started.Add(si.Clock.Offset), si.Clock
	}
	return sh, nil
}

// samePlan refuses segments of different runs: their resolved plans must
// match but for load.segment, and their experiments too.
func samePlan(shards []*shard) error {
	key := func(sh *shard) ([]byte, error) {
		p := *sh.plan
		p.Load.Segment, p.Output = "", plan.Output{} // where each wrote is its own business
		y, err := p.Redacted()
		if err != nil {
			return nil, err
		}
		d, err := os.ReadFile(filepath.Join(sh.dir, rundir.Experiment))
		if err != nil && !os.IsNotExist(err) {
			return nil, fmt.Errorf("merge: %w", err)
		}
		return append(y, d...), nil
	}
	want, err := key(shards[0])
	if err != nil {
		return err
	}
	for _, sh := range shards[1:] {
		got, err := key(sh)
		if err != nil {
			return err
		}
		if !bytes.Equal(got, want) {
			return fmt.Errorf("merge: %s and %s ran different plans or experiments (they must match but for load.segment and output)", shards[0].dir, sh.dir)
		}
	}
	return nil
}

// writeHeader writes the merged plan.yaml (no segment), the experiment and
// env.json: the first segment's environment with the merge's facts.
func writeHeader(out string, merged *plan.Plan, shards []*shard) error {
	y, err := merged.Redacted()
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(out, rundir.Plan), y, 0o644); err != nil {
		return fmt.Errorf("merge: %w", err)
	}
	d, err := summary.ReadDesign(shards[0].dir, shards[0].plan)
	if err != nil {
		return fmt.Errorf("merge: %w", err)
	}
	d.Segments = len(shards) // each gets its own figures
	if err := summary.WriteDesign(out, d); err != nil {
		return fmt.Errorf("merge: %w", err)
	}
	env := map[string]any{}
	if raw, err := os.ReadFile(filepath.Join(shards[0].dir, rundir.Env)); err == nil {
		if err := json.Unmarshal(raw, &env); err != nil {
			return fmt.Errorf("merge: %s: %s: %w", shards[0].dir, rundir.Env, err)
		}
	}
	var segs []map[string]any
	for _, sh := range shards {
		segs = append(segs, map[string]any{"segment": sh.seg.String(), "dir": sh.dir,
			"start_offset_ms": float64(sh.offsetUS) / 1e3, "complete": sh.sawEnd,
			"clock_offset_ms": float64(sh.clock.Offset.Microseconds()) / 1e3, "clock_rtt_ms": float64(sh.clock.RTT.Microseconds()) / 1e3})
	}
	merge := map[string]any{"segments": segs, "offset_bound_ms": float64(offsetBound(shards).Microseconds()) / 1e3,
		"clock_error_ms": float64(clockError(shards).Microseconds()) / 1e3}
	telemetry, err := readTelemetry(shards)
	if err != nil {
		return err
	}
	if i := serverScraper(telemetry); i >= 0 {
		merge["server_telemetry_from"] = shards[i].seg.String()
	}
	env["merge"] = merge
	return rundir.WriteJSON(filepath.Join(out, rundir.Env), env)
}

func offsetBound(shards []*shard) time.Duration {
	var hi int64
	for _, sh := range shards {
		hi = max(hi, sh.offsetUS)
	}
	return time.Duration(hi) * time.Microsecond
}

func clockError(shards []*shard) time.Duration {
	var e time.Duration
	for _, sh := range shards {
		e = max(e, sh.clock.RTT/2)
	}
	return e
}

func segmentList(shards []*shard) string {
	var s []string
	for _, sh := range shards {
		s = append(s, sh.seg.String())
	}
	return strings.Join(s, ", ")
}

// readTelemetry is every segment's telemetry samples, in segment order.
func readTelemetry(shards []*shard) ([][]observe.Sample, error) {
	out := make([][]observe.Sample, len(shards))
	for i, sh := range shards {
		samples, err := summary.ReadTelemetry(sh.dir)
		if err != nil {
			return nil, fmt.Errorf("merge: %s: %w", sh.dir, err)
		}
		out[i] = samples
	}
	return out, nil
}

// serverScraper is the segment whose server and GPU samples the merged
// run keeps: every segment scrapes the same server, so keeping more than
// one would count it N times. It is the one whose scrape covers the
// longest span (a segment lost early covers less), the lowest index on a
// tie; -1 when none scraped.
func serverScraper(samples [][]observe.Sample) int {
	best, bestSpan := -1, int64(-1)
	for i, ss := range samples {
		first, last, any := int64(0), int64(0), false
		for _, s := range ss {
			if s.Source == "client" {
				continue
			}
			if !any {
				first, any = s.TimeUS, true
			}
			first, last = min(first, s.TimeUS), max(last, s.TimeUS)
		}
		if any && last-first > bestSpan {
			best, bestSpan = i, last-first
		}
	}
	return best
}

// mergeTelemetry keeps every segment's client samples (a saturated segment
// makes the merged run's client saturated) and the server and GPU samples
// of one segment (serverScraper).
func mergeTelemetry(out string, shards []*shard) error {
	perShard, err := readTelemetry(shards)
	if err != nil {
		return err
	}
	scraper := serverScraper(perShard)
	var all []observe.Sample
	for i, sh := range shards {
		for _, s := range perShard[i] {
			if i != scraper && s.Source != "client" {
				continue
			}
			if s.Source == "client" {
				s.Segment = sh.seg.String() // so a saturated segment is named
			}
			s.TimeUS += sh.offsetUS
			s.TS = s.TimeUS / 1e6
			all = append(all, s)
		}
	}
	if len(all) == 0 {
		return nil
	}
	slices.SortStableFunc(all, func(a, b observe.Sample) int { return cmp.Compare(a.TimeUS, b.TimeUS) })
	w, err := rundir.NewJSONLWriter(filepath.Join(out, rundir.Telemetry))
	if err != nil {
		return err
	}
	for i := range all {
		if err := w.Write(&all[i]); err != nil {
			w.Close()
			return err
		}
	}
	return w.Close()
}

// mergeSpans writes every segment's OTLP spans into one spans.jsonl, in
// segment order: each segment's trace ids derive from its own directory's
// name, so the join by trace id finds each span's record in the merged
// records as it did in the segment's. Nothing is written when no segment
// listened for spans.
func mergeSpans(out string, shards []*shard) error {
	var w *rundir.JSONLWriter
	for _, sh := range shards {
		path := filepath.Join(sh.dir, rundir.Spans)
		if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if w == nil {
			var err error
			if w, err = rundir.NewJSONLWriter(filepath.Join(out, rundir.Spans)); err != nil {
				return err
			}
		}
		if _, err := rundir.ReadSpans(path, func(s *record.Span) error { return w.Write(s) }); err != nil {
			w.Close()
			return fmt.Errorf("merge: %s: %w", sh.dir, err)
		}
	}
	if w == nil {
		return nil
	}
	return w.Close()
}
