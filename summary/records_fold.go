package summary

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/inferload/inferload/observe"
	"github.com/inferload/inferload/plan"
	"github.com/inferload/inferload/record"
	"github.com/inferload/inferload/report"
	"github.com/inferload/inferload/rundir"
)

// recordsFold is what assembly gathers from a run's records, one record at
// a time in the order they were written: the run's aggregate, each
// segment's, each stage's, a soak's windows, and the report's digest. A
// rebuild feeds it from records.jsonl.zst; a live run feeds it each record
// as it writes it (Live), so the run's end need not read back and
// decode every record it wrote (about a tenth of the client's CPU when
// reads carry many tokens, and the whole of a long soak's files,
// BENCHMARKS.md).
type recordsFold struct {
	agg    *record.Aggregate
	segs   []*record.Aggregate // one per segment of a merged run; nil otherwise
	accs   map[int]*StepAcc    // a staged run's stages, by index
	staged bool
	soak   *windower         // a soak's windows; nil for other designs
	join   *observe.SpanJoin // the server's spans, joined before aggregating; nil when none
	digest *report.Digest    // nil: no report drawn
	p      *plan.Plan
	d      Design
	n      int
	// lastDoneUS is the latest completion folded, on the run clock.
	lastDoneUS int64
}

func newRecordsFold(p *plan.Plan, d Design, join *observe.SpanJoin, digest *report.Digest) *recordsFold {
	f := &recordsFold{agg: NewAggregate(p), accs: map[int]*StepAcc{}, staged: d.staged(),
		join: join, digest: digest, p: p, d: d}
	if d.Soak != nil {
		f.soak = newWindower(p.Load.Warmup.Microseconds(), d.Soak.Window)
	}
	if d.Segments > 1 {
		f.segs = make([]*record.Aggregate, d.Segments)
		for i := range f.segs {
			f.segs[i] = record.NewAggregate()
		}
	}
	return f
}

// add folds in one record. The digest and a soak's windows see it as
// written, before the span join (they draw what the client measured).
func (f *recordsFold) Add(r *record.Result) {
	f.n++
	f.lastDoneUS = max(f.lastDoneUS, r.DoneUS())
	if f.digest != nil {
		f.digest.Add(r)
	}
	if f.soak != nil {
		f.soak.add(r)
	}
	if f.join != nil {
		f.join.Apply(r)
	}
	f.agg.Add(r)
	if f.segs != nil {
		f.segs[record.SegmentOf(r.ID, len(f.segs))].Add(r)
	}
	if r.Step > 0 && f.staged {
		acc := f.accs[r.Step]
		if acc == nil {
			acc = NewStepAcc(f.p, f.d)
			f.accs[r.Step] = acc
		}
		acc.Add(r)
	}
}

// Live is the fold a live run feeds as it writes its records, with the
// plan and design read back from the run directory exactly as a rebuild
// reads them, and the bytes they were read from, so the run's end can
// check that nothing it folded by has changed (stillCurrent). It is nil
// for a run that listens for OTLP spans: those are joined onto the records
// after the run, once every span has come.
type Live struct {
	*recordsFold
	planRaw, designRaw []byte
}

func NewLive(dir string, listensForSpans bool) (*Live, error) {
	if listensForSpans {
		return nil, nil
	}
	p, d, err := readPlanDesign(dir)
	if err != nil {
		return nil, err
	}
	planRaw, designRaw, err := readPlanDesignRaw(dir)
	if err != nil {
		return nil, err
	}
	return &Live{recordsFold: newRecordsFold(p, d, nil, report.NewDigest()), planRaw: planRaw, designRaw: designRaw}, nil
}

// Aggregate is the run's aggregate the fold feeds: the live run reads
// its running figures (rates, in flight) from it rather than keep a
// second one.
func (f *Live) Aggregate() *record.Aggregate { return f.agg }

// stillCurrent reports whether a rebuild of dir would fold the records by
// what this fold did: the same plan and design bytes, and no spans file.
func (f *Live) stillCurrent(dir string) bool {
	planRaw, designRaw, err := readPlanDesignRaw(dir)
	if err != nil || !bytes.Equal(planRaw, f.planRaw) || !bytes.Equal(designRaw, f.designRaw) {
		return false
	}
	_, err = os.Stat(filepath.Join(dir, rundir.Spans))
	return errors.Is(err, fs.ErrNotExist)
}

// readPlanDesignRaw reads the bytes of plan.yaml and experiment.json (nil
// when the design file is absent).
func readPlanDesignRaw(dir string) (planRaw, designRaw []byte, err error) {
	if planRaw, err = os.ReadFile(filepath.Join(dir, rundir.Plan)); err != nil {
		return nil, nil, err
	}
	designRaw, err = os.ReadFile(filepath.Join(dir, rundir.Experiment))
	if errors.Is(err, fs.ErrNotExist) {
		err = nil
	}
	return planRaw, designRaw, err
}
