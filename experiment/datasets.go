package experiment

import (
	"context"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/inferload/inferload/engine"
	"github.com/inferload/inferload/plan"
	"github.com/inferload/inferload/protocol"
	"github.com/inferload/inferload/workload"
)

// workloadFiles holds the tokenizers and datasets one run has loaded,
// keyed by what was asked for, so the steps of a sweep (each builds its
// own source), a trace's generator and the pre-run profile read a file
// once. It lives as long as its run: a long-lived caller (a library user,
// a UI starting runs) reads a changed file afresh on its next run. The nil
// *workloadFiles caches nothing. Entries are immutable.
type workloadFiles struct {
	ctx        context.Context // stops the reads (a signal); nil means never
	mu         sync.Mutex
	tokenizers map[string]workload.Tokenizer
	datasets   map[datasetKey]*workload.Dataset
	// prefixes notes the shared prefixes the run has sent, across its
	// phases (engine.PrefixLedger).
	prefixes *engine.PrefixLedger
}

// newWorkloadFiles returns an empty cache for one run, whose reads stop
// when ctx is done.
func newWorkloadFiles(ctx context.Context) *workloadFiles {
	return &workloadFiles{ctx: ctx, tokenizers: map[string]workload.Tokenizer{}, datasets: map[datasetKey]*workload.Dataset{},
		prefixes: engine.NewPrefixLedger()}
}

type datasetKey struct {
	ref       plan.Dataset
	tokenizer string
	seed      uint64
}

// tokenizerOf loads the plan's tokenizer; nil means the default word list
// (exact for cl100k_base, which also measures datasets by default).
func (f *workloadFiles) tokenizerOf(p *plan.Plan) (workload.Tokenizer, error) {
	name := p.Workload.Tokenizer
	if name == "" {
		return nil, nil
	}
	if f == nil {
		return loadTokenizer(context.Background(), name)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if t, ok := f.tokenizers[name]; ok {
		return t, nil
	}
	t, err := loadTokenizer(f.context(), name)
	if err != nil {
		return nil, err
	}
	f.tokenizers[name] = t
	return t, nil
}

// context is the run's context, for the reads of its files.
func (f *workloadFiles) context() context.Context {
	if f == nil || f.ctx == nil {
		return context.Background()
	}
	return f.ctx
}

func loadTokenizer(ctx context.Context, name string) (workload.Tokenizer, error) {
	t, err := workload.LoadTokenizerContext(ctx, name)
	if err != nil {
		return nil, fmt.Errorf("workload.tokenizer: %w", err)
	}
	return t, nil
}

// datasetOf loads the dataset ref names, measured with tok.
func (f *workloadFiles) datasetOf(ref plan.Dataset, tok workload.Tokenizer, name string, seed uint64) (*workload.Dataset, error) {
	load := func() (*workload.Dataset, error) {
		return workload.LoadDataset(ref.Path, workload.DatasetOptions{Format: ref.Format, Tokenizer: tok,
			MinInputTokens: ref.MinInputTokens, MaxInputTokens: ref.MaxInputTokens, Sample: ref.Sample, Seed: seed,
			Context: f.context()})
	}
	if f == nil {
		return load()
	}
	key := datasetKey{ref: ref, tokenizer: name, seed: seed}
	f.mu.Lock()
	defer f.mu.Unlock()
	if d, ok := f.datasets[key]; ok {
		return d, nil
	}
	d, err := load()
	if err != nil {
		return nil, err
	}
	f.datasets[key] = d
	return d, nil
}

// attach gives each class of cfg the plan's tokenizer and its
// dataset, if it names one. cfg.Classes follow the plan's classes in order
// (or are the single default class).
func (f *workloadFiles) attach(p *plan.Plan, cfg *workload.MixConfig) error {
	tok, err := f.tokenizerOf(p)
	if err != nil {
		return err
	}
	refs := []plan.Dataset{p.Workload.Dataset}
	paths := []string{"workload.dataset"}
	if len(p.Workload.Classes) > 0 {
		refs, paths = refs[:0], paths[:0]
		for k, c := range p.Workload.Classes {
			refs = append(refs, c.Dataset)
			paths = append(paths, fmt.Sprintf("workload.classes[%d].dataset", k))
		}
	}
	for k := range cfg.Classes {
		cfg.Classes[k].Tokenizer = tok
		if k >= len(refs) || refs[k].Path == "" {
			continue
		}
		d, err := f.datasetOf(refs[k], tok, p.Workload.Tokenizer, p.Workload.Seed)
		if err != nil {
			return fmt.Errorf("%s: %w", paths[k], err)
		}
		if err := imagesSendable(d, refs[k].Path, classAPI(p, k)); err != nil {
			return fmt.Errorf("%s: %w", paths[k], err)
		}
		cfg.Classes[k].Dataset = d
	}
	return nil
}

// classAPI is the API the k-th class's requests go to (the target's for
// the single default class).
func classAPI(p *plan.Plan, k int) protocol.API {
	if k < len(p.Workload.Classes) && p.Workload.Classes[k].API != "" {
		return protocol.API(p.Workload.Classes[k].API)
	}
	return protocol.API(p.Target.API)
}

// imagesSendable fails when a dataset holds an image its class's API
// cannot send: sending the text alone would measure another request.
func imagesSendable(d *workload.Dataset, path string, api protocol.API) error {
	if api.SendsImages() {
		return nil
	}
	if line := d.FirstImageLine(); line > 0 {
		return fmt.Errorf("dataset %s line %d: has an image_url part, which the %s API cannot send (images go in chat or messages API messages: use api: chat or messages)", path, line, api)
	}
	return nil
}

// datasetProfiles describes the plan's datasets for the pre-run printout.
func datasetProfiles(p *plan.Plan, files *workloadFiles) []string {
	cfg := workload.MixConfig{Classes: make([]workload.ClassConfig, max(len(p.Workload.Classes), 1))}
	if files.attach(p, &cfg) != nil {
		return nil // the run itself reports the error
	}
	var out []string
	for k, c := range cfg.Classes {
		if c.Dataset == nil {
			continue
		}
		label := "dataset"
		if len(p.Workload.Classes) > 0 {
			label = "class " + p.Workload.Classes[k].Name + " dataset"
		}
		out = append(out, label+": "+strings.TrimSpace(c.Dataset.Profile().String()))
	}
	return out
}

// printDatasetProfiles tells the user what the datasets hold before the
// run starts (count and length percentiles).
func printDatasetProfiles(w io.Writer, p *plan.Plan, files *workloadFiles) {
	if w == nil {
		return
	}
	for _, line := range datasetProfiles(p, files) {
		fmt.Fprintln(w, line)
	}
}
