package workload

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/inferload/inferload/internal/inputfile"
)

// Dataset formats LoadDataset reads. docs/workload.md shows each layout.
const (
	// FormatShareGPT is a JSON array of {"conversations": [{"from":
	// "human", "value": ...}, {"from": "gpt", "value": ...}]}: the first
	// human turn is the prompt and the reply after it sets the output
	// length.
	FormatShareGPT = "sharegpt"
	// FormatOpenAIJSONL is one chat request per line: {"messages": [...]}
	// with an optional assistant reply or max_tokens for the output length.
	FormatOpenAIJSONL = "openai-jsonl"
	// FormatJSONL is one {"prompt": ..., "output_tokens": N} per line.
	FormatJSONL = "jsonl"
	// FormatCSV is a CSV file with a header naming a prompt column and an
	// optional output_tokens column.
	FormatCSV = "csv"
)

// DatasetFormats lists the formats LoadDataset accepts.
func DatasetFormats() []string {
	return []string{FormatShareGPT, FormatOpenAIJSONL, FormatJSONL, FormatCSV}
}

// DatasetOptions says how to read and cut down a dataset. The zero value
// reads every entry, guesses the format and counts with cl100k_base.
type DatasetOptions struct {
	// Format is one of DatasetFormats; "" picks one from the file's
	// extension and first line.
	Format string
	// Tokenizer measures prompts and replies; nil means cl100k_base.
	Tokenizer Tokenizer
	// MinInputTokens drops entries with shorter prompts (0: no minimum).
	MinInputTokens int
	// MaxInputTokens drops entries with longer prompts (0: no maximum).
	MaxInputTokens int
	// Sample keeps this many entries, chosen so the input length
	// distribution is preserved (0 or more than remain: keep all).
	Sample int
	// Seed picks the sample: the same seed keeps the same entries.
	Seed uint64
	// Context stops reading the file when done (a signal); nil means
	// never. The file is refused past inputfile.Dataset's limit.
	Context context.Context
}

// ChatMessage is one message of a chat dataset entry.
type ChatMessage struct {
	Role    string
	Content string
	// Images are the message's image_url parts, sent after Content.
	Images []Image
	// ToolCalls, on an assistant message, are the function calls its
	// reply made; ToolCallID, on a "tool" message, names the call whose
	// result Content is (an agent graph's tool results, sent to a chat
	// call as OpenAI's function-calling protocol does).
	ToolCalls  []ToolCall
	ToolCallID string
}

// DatasetEntry is one request of a dataset.
type DatasetEntry struct {
	// Prompt is the user message to send.
	Prompt string
	// Messages is the conversation up to and including Prompt for chat
	// datasets whose entries carry more than one message (a system prompt,
	// earlier turns) or images; nil when Prompt is the whole input.
	Messages []ChatMessage
	// InputTokens is the length of the input: Prompt, or the contents of
	// all Messages, without chat-template tokens.
	InputTokens int
	// OutputTokens is the expected output length: the recorded reply's
	// length or the entry's own output length; 0 when the entry gives
	// none and the plan's output distribution must decide.
	OutputTokens int
	// Line is where the entry starts in the file, for error reports and
	// for finding an entry again.
	Line int
	// Answer grades the reply to this entry; nil when the entry carries
	// no expected answer (the reply is then neither kept nor graded).
	Answer *Answer
}

// Dataset is a list of prompts read from a file, filtered and sampled. It
// is immutable and safe for concurrent use.
type Dataset struct {
	entries []DatasetEntry
	profile DatasetProfile
}

// datasetStream is the second PCG seed word of the sampling draw, so it is
// independent of the other streams seeded with the plan seed.
const datasetStream = 0xda7a_5e7

// LoadDataset reads the dataset at path, measures every entry with the
// tokenizer, drops entries outside the input length bounds and samples
// what remains. Errors name the file, line and field. A dataset with no
// entry left is an error, so a run never starts without prompts.
func LoadDataset(path string, opts DatasetOptions) (*Dataset, error) {
	if opts.MinInputTokens < 0 || opts.MaxInputTokens < 0 || opts.Sample < 0 {
		return nil, fmt.Errorf("dataset %s: negative length bound or sample size", path)
	}
	if opts.MaxInputTokens > 0 && opts.MinInputTokens > opts.MaxInputTokens {
		return nil, fmt.Errorf("dataset %s: min input tokens %d above max %d", path, opts.MinInputTokens, opts.MaxInputTokens)
	}
	tok := opts.Tokenizer
	if tok == nil {
		var err error
		if tok, err = LoadTokenizer(Cl100kBase); err != nil {
			return nil, err
		}
	}
	data, err := inputfile.Read(cmp.Or(opts.Context, context.Background()), path, inputfile.Dataset)
	if err != nil {
		return nil, fmt.Errorf("dataset: %w", err)
	}
	// Spreadsheet exports often start with a UTF-8 byte order mark, which
	// would otherwise become part of the first header name or prompt.
	data = bytes.TrimPrefix(data, []byte("\ufeff"))
	format := opts.Format
	if format == "" {
		format = detectDatasetFormat(path, data)
	}
	raw, skipped, err := parseDataset(format, data)
	if err != nil {
		return nil, fmt.Errorf("dataset %s: %w", path, err)
	}
	all := measureEntries(raw, tok)
	kept := filterByInput(all, opts.MinInputTokens, opts.MaxInputTokens)
	filtered := len(all) - len(kept)
	if len(kept) == 0 {
		return nil, fmt.Errorf("dataset %s (%s): no entry left: %d read, %d skipped, %d outside input length [%d, %s]",
			path, format, len(raw)+skipped, skipped, len(all), opts.MinInputTokens, boundString(opts.MaxInputTokens))
	}
	kept = stratifiedSample(kept, opts.Sample, opts.Seed)
	d := &Dataset{entries: kept}
	d.profile = newDatasetProfile(path, format, tok.Name(), kept)
	d.profile.Read = len(raw) + skipped
	d.profile.Skipped = skipped
	d.profile.Filtered = filtered
	return d, nil
}

// boundString prints a maximum where 0 means none.
func boundString(n int) string {
	if n == 0 {
		return "∞"
	}
	return fmt.Sprint(n)
}

// Len returns the number of entries.
func (d *Dataset) Len() int { return len(d.entries) }

// Entry returns entry i, 0 <= i < Len().
func (d *Dataset) Entry(i int) DatasetEntry { return d.entries[i] }

// FirstImageLine returns the line of the first entry that holds an image,
// 0 when none does: an API that cannot send images names it in its error.
func (d *Dataset) FirstImageLine() int {
	for _, e := range d.entries {
		for _, m := range e.Messages {
			if len(m.Images) > 0 {
				return e.Line
			}
		}
	}
	return 0
}

// Profile describes the entries kept.
func (d *Dataset) Profile() DatasetProfile { return d.profile }

// measureEntries counts the tokens of every parsed entry.
func measureEntries(raw []rawEntry, tok Tokenizer) []DatasetEntry {
	out := make([]DatasetEntry, len(raw))
	for i, r := range raw {
		e := DatasetEntry{Prompt: r.prompt, Messages: r.messages, OutputTokens: r.outputTokens, Line: r.line, Answer: r.answer}
		if len(r.messages) > 0 {
			for _, m := range r.messages {
				e.InputTokens += tok.Count(m.Content)
			}
		} else {
			e.InputTokens = tok.Count(r.prompt)
		}
		if r.reply != nil {
			e.OutputTokens = tok.Count(*r.reply)
		}
		out[i] = e
	}
	return out
}

// filterByInput keeps the entries whose input length is within [lo, hi]
// (hi 0: no maximum).
func filterByInput(entries []DatasetEntry, lo, hi int) []DatasetEntry {
	out := make([]DatasetEntry, 0, len(entries))
	for _, e := range entries {
		if e.InputTokens >= lo && (hi == 0 || e.InputTokens <= hi) {
			out = append(out, e)
		}
	}
	return out
}

// stratifiedSample keeps n entries that preserve the input length
// distribution, in file order. The entries are sorted by input length and
// cut into n strata of equal count; one entry is drawn at random from each.
// So the k-th percentile of the sample is within one stratum of the k-th
// percentile of the whole, which a plain random sample of a few hundred
// only achieves on average (its P99 is often off by a factor when the
// tail is long).
//
// With 10 entries of input lengths 1..10 and n = 5, the strata are {1,2},
// {3,4}, {5,6}, {7,8}, {9,10}, and the sample has one of each pair.
func stratifiedSample(entries []DatasetEntry, n int, seed uint64) []DatasetEntry {
	if n <= 0 || n >= len(entries) {
		return entries
	}
	order := make([]int, len(entries))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		return cmp.Or(cmp.Compare(entries[a].InputTokens, entries[b].InputTokens),
			cmp.Compare(entries[a].OutputTokens, entries[b].OutputTokens))
	})
	rng := rand.New(rand.NewPCG(seed, datasetStream))
	picked := make([]int, n)
	for k := range n {
		lo, hi := k*len(entries)/n, (k+1)*len(entries)/n
		picked[k] = order[lo+rng.IntN(hi-lo)]
	}
	slices.Sort(picked)
	out := make([]DatasetEntry, n)
	for k, i := range picked {
		out[k] = entries[i]
	}
	return out
}

// DatasetProfile summarises a dataset for the printout before a run.
type DatasetProfile struct {
	Path      string
	Format    string
	Tokenizer string
	// Read is the number of entries in the file; Skipped those without a
	// usable prompt (a ShareGPT conversation with no human turn and reply);
	// Filtered those outside the input length bounds; Count those kept
	// after sampling.
	Read, Skipped, Filtered, Count int
	// Input and Output are the token length statistics of the kept
	// entries. Output covers only entries with a known output length
	// (Output.N of them).
	Input, Output LengthSummary
}

// LengthSummary describes a set of token lengths. Percentiles are
// nearest-rank: P90 is the smallest length at least 90% of entries do not
// exceed.
type LengthSummary struct {
	N                       int
	Min, P50, P90, P99, Max int
	Mean                    float64
}

// newDatasetProfile computes the profile of the kept entries.
func newDatasetProfile(path, format, tokenizer string, entries []DatasetEntry) DatasetProfile {
	in := make([]int, 0, len(entries))
	out := make([]int, 0, len(entries))
	for _, e := range entries {
		in = append(in, e.InputTokens)
		if e.OutputTokens > 0 {
			out = append(out, e.OutputTokens)
		}
	}
	return DatasetProfile{
		Path: path, Format: format, Tokenizer: tokenizer, Count: len(entries),
		Input: summariseLengths(in), Output: summariseLengths(out),
	}
}

// summariseLengths returns the statistics of xs (which it sorts).
func summariseLengths(xs []int) LengthSummary {
	if len(xs) == 0 {
		return LengthSummary{}
	}
	slices.Sort(xs)
	sum := 0
	for _, x := range xs {
		sum += x
	}
	rank := func(p float64) int { return xs[max(int(math.Ceil(p*float64(len(xs))))-1, 0)] }
	return LengthSummary{
		N: len(xs), Min: xs[0], Max: xs[len(xs)-1],
		P50: rank(0.50), P90: rank(0.90), P99: rank(0.99),
		Mean: float64(sum) / float64(len(xs)),
	}
}

// String is the short profile printed before a run, for example:
//
//	dataset prompts.json (sharegpt, cl100k_base): 500 of 9000 entries (120 skipped, 380 outside the length bounds)
//	  input tokens   P50 212  P90 870  P99 1900  (min 4, max 3012, mean 301.2)
//	  output tokens  P50 180  P90 512  P99 1024  (min 1, max 2048, mean 240.7)
func (p DatasetProfile) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "dataset %s (%s, %s): %d of %d entries", p.Path, p.Format, p.Tokenizer, p.Count, p.Read)
	if p.Skipped > 0 || p.Filtered > 0 {
		fmt.Fprintf(&b, " (%d skipped, %d outside the length bounds)", p.Skipped, p.Filtered)
	}
	b.WriteString("\n  input tokens   " + p.Input.String())
	b.WriteString("\n  output tokens  ")
	if p.Output.N == 0 {
		b.WriteString("not given by the dataset; the plan's output length applies")
	} else {
		b.WriteString(p.Output.String())
		if p.Output.N < p.Count {
			fmt.Fprintf(&b, " over %d entries that give one", p.Output.N)
		}
	}
	return b.String()
}

// String prints the percentiles, then the range and mean.
func (s LengthSummary) String() string {
	return fmt.Sprintf("P50 %d  P90 %d  P99 %d  (min %d, max %d, mean %.1f)", s.P50, s.P90, s.P99, s.Min, s.Max, s.Mean)
}
