package plan

import (
	"cmp"
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/inferload/inferload/protocol"
	"github.com/inferload/inferload/workload"
)

// DefaultLengthBuckets are the input-length bucket bounds, in tokens, when
// workload.length_buckets is unset: ≤256 (chat turns), ≤1024, ≤4096
// (documents) and above.
var DefaultLengthBuckets = []int{256, 1024, 4096}

// maxLengthBuckets bounds workload.length_buckets: each bucket is a row
// of the report.
const maxLengthBuckets = 32

// classNameRe is what may name a class (workload checks the same).
var classNameRe = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,39}$`)

// applyDefaults fills the workload's unset fields. With classes, the flat
// input_tokens and output_tokens take no effect and stay unset; each class
// gets their defaults instead.
func (w *Workload) applyDefaults() {
	setIfZero(&w.Seed, DefaultSeed)
	setIfZero(&w.Salt, DefaultSalt)
	setIfNil(&w.IgnoreEOS, true)
	if w.LengthBuckets == nil {
		w.LengthBuckets = append([]int(nil), DefaultLengthBuckets...)
	}
	w.SharedPrefix.applyDefaults()
	if len(w.Classes) == 0 {
		setIfZero(&w.InputTokens, DefaultInputTokens)
		setIfZero(&w.OutputTokens, DefaultOutputTokens)
		return
	}
	for k := range w.Classes {
		c := &w.Classes[k]
		setIfZero(&c.InputTokens, DefaultInputTokens)
		setIfZero(&c.OutputTokens, DefaultOutputTokens)
		c.SharedPrefix.applyDefaults()
	}
}

// applyDefaults gives a prefix that is used its default share and groups.
func (sp *SharedPrefix) applyDefaults() {
	if sp.Tokens > 0 {
		setIfZero(&sp.Fraction, 1)
		setIfZero(&sp.Groups, 1)
	}
}

// workload checks the workload section.
func (v *validator) workload() {
	w := &v.p.Workload
	if len(w.Classes) == 0 {
		v.length("workload.input_tokens", w.InputTokens)
		v.length("workload.output_tokens", w.OutputTokens)
		v.prefix("workload.shared_prefix", w.SharedPrefix)
		v.dataset("workload.dataset", w.Dataset)
		v.images("workload.images", w.Images, v.p.Target.API)
		v.documents("workload.documents", w.Documents, v.p.Target.API)
		v.audio("workload.audio", w.Audio, v.p.Target.API)
	} else {
		v.flatWithClasses()
		v.classes()
	}
	v.language("workload.language", w.Language)
	v.salt()
	v.lengthBuckets()
	v.badInput()
}

// language checks a synthetic-prompt language.
func (v *validator) language(path, lang string) {
	if err := workload.CheckLanguage(lang); err != nil {
		v.fail(path, "%v", err)
	}
}

// flatWithClasses rejects the single-class fields next to classes, where
// they would silently do nothing.
func (v *validator) flatWithClasses() {
	w := &v.p.Workload
	for path, set := range map[string]bool{
		"workload.input_tokens":  w.InputTokens != "",
		"workload.output_tokens": w.OutputTokens != "",
		"workload.shared_prefix": w.SharedPrefix != (SharedPrefix{}),
		"workload.dataset":       w.Dataset != (Dataset{}),
		"workload.images":        w.Images != (Images{}),
		"workload.documents":     w.Documents != (Documents{}),
		"workload.audio":         w.Audio != (Audio{}),
	} {
		if set {
			v.fail(path, "has no effect with workload.classes: set it in each class instead")
		}
	}
}

// classes checks each class of workload.classes.
func (v *validator) classes() {
	seen := map[string]int{}
	for k := range v.p.Workload.Classes {
		c := &v.p.Workload.Classes[k]
		path := fmt.Sprintf("workload.classes[%d]", k)
		switch first, dup := seen[c.Name]; {
		case !classNameRe.MatchString(c.Name):
			v.fail(path+".name", "%q: want 1-40 letters, digits, '.', '_' or '-' (required)", c.Name)
		case c.Name == workload.BadInputClass:
			v.fail(path+".name", "%s is reserved for workload.bad_input", c.Name)
		case dup:
			v.fail(path+".name", "%s is already the name of class %d", c.Name, first)
		}
		seen[c.Name] = k
		if !(c.Weight > 0) || math.IsInf(c.Weight, 0) || c.Weight > 1e12 {
			v.fail(path+".weight", "%v: want a positive number (required; weights are relative)", c.Weight)
		}
		v.length(path+".input_tokens", c.InputTokens)
		v.length(path+".output_tokens", c.OutputTokens)
		if c.API != "" && !knownAPI(c.API) {
			v.fail(path+".api", "%q is not an API: want %s", c.API, protocol.APINames())
		}
		v.language(path+".language", c.Language)
		v.images(path+".images", c.Images, cmp.Or(c.API, v.p.Target.API))
		if !c.IsGraph() {
			v.documents(path+".documents", c.Documents, cmp.Or(c.API, v.p.Target.API))
			v.audio(path+".audio", c.Audio, cmp.Or(c.API, v.p.Target.API))
		}
		v.turns(path, c)
		v.chain(path, c)
		v.graph(path, c)
		if _, err := json.Marshal(c.Body); err != nil {
			v.fail(path+".body", "cannot be sent as JSON: %v", err)
		}
		v.prefix(path+".shared_prefix", c.SharedPrefix)
		v.dataset(path+".dataset", c.Dataset)
		v.classTimeouts(path+".timeouts", c.Timeouts)
	}
}

// classTimeouts checks a class's timeout overrides; zero keeps the
// target's, so only negative values are wrong.
func (v *validator) classTimeouts(path string, t Timeouts) {
	for k, d := range []time.Duration{t.Connect, t.TTFT, t.Total} {
		if d < 0 {
			v.fail(path+"."+[]string{"connect", "ttft", "total"}[k], "%v: want a positive duration (or none: the target's)", d)
		}
	}
}

// dataset checks a dataset reference; the file itself is read when the
// run starts.
func (v *validator) dataset(path string, d Dataset) {
	if d == (Dataset{}) {
		return
	}
	if d.Path == "" {
		v.fail(path+".path", "set the dataset file, or drop %s", path)
	}
	if d.Format != "" && !slices.Contains(workload.DatasetFormats(), d.Format) {
		v.fail(path+".format", "%q: want one of %s (or leave it out to guess)", d.Format, strings.Join(workload.DatasetFormats(), ", "))
	}
	if d.Sample < 0 || d.MinInputTokens < 0 || d.MaxInputTokens < 0 {
		v.fail(path, "sample, min_input_tokens and max_input_tokens must not be negative")
	}
	if d.MaxInputTokens > 0 && d.MinInputTokens > d.MaxInputTokens {
		v.fail(path+".min_input_tokens", "%d is above max_input_tokens %d", d.MinInputTokens, d.MaxInputTokens)
	}
}

// prefix checks a shared prefix with workload's own rules.
func (v *validator) prefix(path string, sp SharedPrefix) {
	if sp == (SharedPrefix{}) {
		return
	}
	if sp.Tokens == 0 {
		v.fail(path+".tokens", "set the prefix length in tokens, or drop %s", path)
		return
	}
	if err := sp.workload().Validate(); err != nil {
		v.fail(path, "%v", err)
	}
}

func (v *validator) lengthBuckets() {
	b := v.p.Workload.LengthBuckets
	if len(b) > maxLengthBuckets {
		v.fail("workload.length_buckets", "%d buckets: want at most %d", len(b), maxLengthBuckets)
		return
	}
	for k, n := range b {
		if n < 1 || n > workload.MaxLength || (k > 0 && n <= b[k-1]) {
			v.fail("workload.length_buckets", "%v: want increasing token counts from 1 to %d, e.g. [256, 1024, 4096]", b, workload.MaxLength)
			return
		}
	}
}

func (v *validator) badInput() {
	b := v.p.Workload.BadInput
	if b.MaxContext != 0 && b.Fraction == 0 {
		v.fail("workload.bad_input.max_context", "only applies with workload.bad_input.fraction")
		return
	}
	if err := b.workload().Validate(); err != nil {
		v.fail("workload.bad_input", "%v", err)
	}
}

// images checks a synthetic images section for requests sent to api.
func (v *validator) images(path string, im Images, api string) {
	if im == (Images{}) {
		return
	}
	if _, err := im.workload(); err != nil {
		v.fail(path, "%v", err)
		return
	}
	switch {
	case im.Count == 0 || protocol.API(api).SendsImages():
	case api == string(protocol.APIHTTP):
		v.templateImages(path)
	default:
		v.fail(path, "images are sent in a chat or messages API message or in an http template's %s: the %s API cannot send them (use api: chat, messages or http)",
			protocol.ImagePlaceholder, api)
	}
}

// templateImages checks that the http API's body template has a place for
// the images a section sends.
func (v *validator) templateImages(path string) {
	t, err := protocol.ParseTemplate(v.p.Target.HTTP.Body, protocol.EscapeJSON)
	if err != nil {
		return // target.http reports it
	}
	if !t.TakesImages() {
		v.fail(path, "the http API sends images only through its body template: target.http.body has no %s (base64) or %s (data URI)",
			protocol.ImagePlaceholder, protocol.ImageURLPlaceholder)
	}
}

// workload converts the section, checking its size and format.
func (im Images) workload() (workload.ImageConfig, error) {
	if im.Count == 0 {
		if im.Size != "" || im.Format != "" {
			return workload.ImageConfig{}, fmt.Errorf("count: set it (1 or more) to send the images size and format describe")
		}
		return workload.ImageConfig{}, nil
	}
	w, h, err := workload.ParseImageSize(im.Size)
	if err != nil {
		return workload.ImageConfig{}, fmt.Errorf("size: %w", err)
	}
	cfg := workload.ImageConfig{Count: im.Count, Width: w, Height: h, Format: im.Format}
	return cfg, cfg.Validate()
}

func (sp SharedPrefix) workload() workload.SharedPrefix {
	return workload.SharedPrefix{Tokens: sp.Tokens, Fraction: sp.Fraction, Groups: sp.Groups}
}

func (b BadInput) workload() workload.BadInputConfig {
	return workload.BadInputConfig{Fraction: b.Fraction, MaxContext: b.MaxContext}
}

// MixConfig turns a validated workload section into the workload
// package's configuration: the classes (or the single default class the
// flat fields describe) and the bad-input mix.
func (w *Workload) MixConfig() (workload.MixConfig, error) {
	cfg := workload.MixConfig{Seed: w.Seed, Salt: w.promptSalt(), BadInput: w.BadInput.workload()}
	ignoreEOS := boolOr(w.IgnoreEOS, DefaultIgnoreEOS)
	if len(w.Classes) == 0 {
		c, err := classConfig(workload.DefaultClass, 1, w.InputTokens, w.OutputTokens, ignoreEOS, w.SharedPrefix)
		c.Language = w.Language
		if err == nil {
			c.Images, err = w.Images.workload()
		}
		if err == nil {
			c.Documents, err = w.Documents.workload()
		}
		if err == nil {
			c.Audio, err = w.Audio.workload()
		}
		cfg.Classes = []workload.ClassConfig{c}
		return cfg, err
	}
	for k, pc := range w.Classes {
		c, err := classConfig(pc.Name, pc.Weight, pc.InputTokens, pc.OutputTokens, boolOr(pc.IgnoreEOS, ignoreEOS), pc.SharedPrefix)
		if err != nil {
			return cfg, fmt.Errorf("workload.classes[%d]: %w", k, err)
		}
		c.Turns = pc.Turns
		c.SyntheticHistory = pc.History == HistorySynthetic
		c.Language = cmp.Or(pc.Language, w.Language)
		if c.Images, err = pc.Images.workload(); err != nil {
			return cfg, fmt.Errorf("workload.classes[%d].images: %w", k, err)
		}
		if c.Documents, err = pc.Documents.workload(); err != nil {
			return cfg, fmt.Errorf("workload.classes[%d].documents: %w", k, err)
		}
		if c.Audio, err = pc.Audio.workload(); err != nil {
			return cfg, fmt.Errorf("workload.classes[%d].audio: %w", k, err)
		}
		cfg.Classes = append(cfg.Classes, c)
	}
	return cfg, nil
}

func classConfig(name string, weight float64, input, output string, ignoreEOS bool, sp SharedPrefix) (workload.ClassConfig, error) {
	in, err := workload.ParseDist(input)
	if err != nil {
		return workload.ClassConfig{}, fmt.Errorf("input_tokens: %w", err)
	}
	out, err := workload.ParseDist(output)
	if err != nil {
		return workload.ClassConfig{}, fmt.Errorf("output_tokens: %w", err)
	}
	return workload.ClassConfig{Name: name, Weight: weight, Input: in, Output: out, IgnoreEOS: ignoreEOS, Prefix: sp.workload()}, nil
}

// ClassOf returns the class named name, or nil for the default class and
// bad input (which use the target's API and body as they are).
func (w *Workload) ClassOf(name string) *Class {
	for k := range w.Classes {
		if w.Classes[k].Name == name {
			return &w.Classes[k]
		}
	}
	return nil
}

func boolOr(b *bool, def bool) bool {
	if b == nil {
		return def
	}
	return *b
}
