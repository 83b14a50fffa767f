package workload

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// entrySummary is the part of a DatasetEntry the format tests compare.
type entrySummary struct {
	Prompt        string
	Messages      int
	Input, Output int
	Line          int
}

func summarise(d *Dataset) []entrySummary {
	out := make([]entrySummary, d.Len())
	for i := range out {
		e := d.Entry(i)
		out[i] = entrySummary{e.Prompt, len(e.Messages), e.InputTokens, e.OutputTokens, e.Line}
	}
	return out
}

func TestLoadDatasetFormats(t *testing.T) {
	t.Parallel()
	tests := []struct {
		path    string
		format  string
		want    []entrySummary
		skipped int
	}{
		// ShareGPT: the first human turn and its reply; a conversation with
		// no reply and an empty one are skipped; a system turn is passed over.
		{"sharegpt.json", "", []entrySummary{
			{"hello world", 0, 2, 4, 2},
			{"the cat sat on the mat", 0, 6, 1, 13},
		}, 2},
		// OpenAI chat: max_tokens or the assistant reply sets the output;
		// a system message makes the input two messages (4 tokens); text
		// parts are joined and an image keeps its message (line 4: one
		// message, sent with its image_url part); a batch API line's body
		// is read; the blank line 3 is not an entry.
		{"chat.jsonl", "", []entrySummary{
			{"hello world", 0, 2, 64, 1},
			{"hello world", 2, 4, 4, 2},
			{"hello world", 1, 2, 8, 4},
			{"the cat", 0, 2, 16, 5},
		}, 0},
		// Plain prompts: output_tokens, its alias max_tokens, or none (0).
		{"prompts.jsonl", "", []entrySummary{
			{"hello world", 0, 2, 128, 1},
			{"the cat sat on the mat", 0, 6, 512, 2},
			{"no length given", 0, 3, 0, 3},
		}, 0},
		// CSV: BOM stripped from the header, extra columns ignored, an empty
		// output cell is unknown, a quoted prompt may span lines.
		{"prompts.csv", "", []entrySummary{
			{"hello world", 0, 2, 128, 2},
			{"the cat, the mat", 0, 5, 0, 3},
			{"a prompt\nover two lines", 0, 6, 7, 4},
		}, 0},
		// An explicit format overrides the extension.
		{"prompts.jsonl", FormatJSONL, nil, 0},
	}
	for _, tt := range tests {
		d, err := LoadDataset(filepath.Join("testdata/dataset", tt.path), DatasetOptions{Format: tt.format})
		if err != nil {
			t.Fatalf("%s: %v", tt.path, err)
		}
		if tt.want != nil && !slices.Equal(summarise(d), tt.want) {
			t.Errorf("%s entries:\n got %+v\nwant %+v", tt.path, summarise(d), tt.want)
		}
		if got := d.Profile().Skipped; got != tt.skipped {
			t.Errorf("%s: skipped %d, want %d", tt.path, got, tt.skipped)
		}
	}
}

func TestLoadDatasetChatMessages(t *testing.T) {
	t.Parallel()
	d, err := LoadDataset("testdata/dataset/chat.jsonl", DatasetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := []ChatMessage{{Role: "system", Content: "be brief"}, {Role: "user", Content: "hello world"}}
	if got := d.Entry(1).Messages; !reflect.DeepEqual(got, want) {
		t.Errorf("messages = %+v, want %+v (the reply is not input)", got, want)
	}
}

// writeTemp writes body to a file named name in a fresh directory.
func writeTemp(t testing.TB, name, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestLoadDatasetErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, body string
		opts       DatasetOptions
		want       []string // substrings of the error
	}{
		// A ShareGPT value of the wrong type names line and field.
		{"bad.json", "[\n{\"conversations\": [\n {\"from\": \"human\", \"value\": 42}]}\n]", DatasetOptions{},
			[]string{"bad.json", "line 3", `field "conversations.value" must be a string, not a number`}},
		// conversations that is not an array: said in the file's terms, no Go type.
		{"notarray.json", "[\n{\"conversations\": 5}\n]", DatasetOptions{},
			[]string{"notarray.json", "line 2", `field "conversations" must be an array of objects, not a number`}},
		// A turn that is not an object.
		{"turn.json", "[{\"conversations\": [\"hi\"]}]", DatasetOptions{},
			[]string{"line 1", `each item of field "conversations" must be an object, not a string`}},
		// A conversation that is not an object.
		{"conv.json", "[5]", DatasetOptions{}, []string{"line 1", "conversation 0: the value must be an object, not a number"}},
		// A ShareGPT file that is not an array.
		{"obj.json", "{\"conversations\": []}", DatasetOptions{}, []string{"obj.json", "line 1", "JSON array"}},
		// Broken JSON in the middle of an array names the line.
		{"cut.json", "[\n{\"conversations\": []},\n{\"conversations\": [}\n]", DatasetOptions{}, []string{"line 3"}},
		// A truncated array.
		{"trunc.json", "[\n{\"conversations\": []}", DatasetOptions{}, []string{"trunc.json", "line 2"}},
		// A JSONL line without a prompt names the line and field.
		{"p.jsonl", "{\"prompt\": \"a\"}\n{\"text\": \"b\"}\n", DatasetOptions{}, []string{"p.jsonl", "line 2", "field prompt"}},
		// A negative output length.
		{"neg.jsonl", "{\"prompt\": \"a\", \"output_tokens\": -3}\n", DatasetOptions{}, []string{"line 1", "output_tokens", "negative"}},
		// A wrongly typed output length names the field.
		{"typ.jsonl", "{\"prompt\": \"a\", \"output_tokens\": \"many\"}\n", DatasetOptions{}, []string{"line 1", `field "output_tokens" must be a whole number, not a string`}},
		// OpenAI messages that are not an array.
		{"m.jsonl", "{\"messages\": \"hi\"}\n", DatasetOptions{}, []string{"line 1", `field "messages" must be an array of objects, not a string`}},
		// A prompt that is not text.
		{"pn.jsonl", "{\"prompt\": 5}\n", DatasetOptions{}, []string{"line 1", `field "prompt" must be a string, not a number`}},
		// An OpenAI line without a user message.
		{"c.jsonl", "{\"messages\": [{\"role\": \"system\", \"content\": \"x\"}]}\n", DatasetOptions{}, []string{"line 1", "no message with role \"user\""}},
		// A content that is neither text nor parts.
		{"c2.jsonl", "{\"messages\": [{\"role\": \"user\", \"content\": 7}]}\n", DatasetOptions{}, []string{"line 1", "messages.0.content"}},
		// A CSV without a prompt column.
		{"h.csv", "id,text\n1,a\n", DatasetOptions{}, []string{"h.csv", "line 1", "no prompt column"}},
		// A CSV output length that is not a number names line and column.
		{"n.csv", "prompt,output_tokens\na,1\nb,lots\n", DatasetOptions{}, []string{"line 3", "column output_tokens", "lots"}},
		// A CSV row with a missing cell (csv.ParseError carries the line).
		{"r.csv", "prompt,output_tokens\na,1\nb\n", DatasetOptions{}, []string{"line 3"}},
		// Filters that leave nothing are an error before any request.
		{"f.jsonl", "{\"prompt\": \"hello world\"}\n", DatasetOptions{MinInputTokens: 100}, []string{"no entry left", "1 outside"}},
		// Bounds that cannot hold anything.
		{"b.jsonl", "{\"prompt\": \"a\"}\n", DatasetOptions{MinInputTokens: 9, MaxInputTokens: 3}, []string{"min input tokens 9 above max 3"}},
		// An unknown format is listed with the known ones.
		{"u.jsonl", "{\"prompt\": \"a\"}\n", DatasetOptions{Format: "parquet"}, []string{`"parquet"`, "sharegpt"}},
		// An empty file has nothing to run.
		{"e.jsonl", "", DatasetOptions{}, []string{"no entry left"}},
	}
	for _, tt := range tests {
		_, err := LoadDataset(writeTemp(t, tt.name, tt.body), tt.opts)
		if err == nil {
			t.Errorf("%s: no error", tt.name)
			continue
		}
		for _, w := range tt.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: error %q lacks %q", tt.name, err, w)
			}
		}
		// What the user sees names the file's fields, never Go's types.
		for _, goText := range []string{"Go struct", "Go value", "json: cannot unmarshal", "struct {", "workload."} {
			if strings.Contains(err.Error(), goText) {
				t.Errorf("%s: error %q shows Go's %q", tt.name, err, goText)
			}
		}
	}
	if _, err := LoadDataset(filepath.Join(t.TempDir(), "none.jsonl"), DatasetOptions{}); err == nil || !strings.Contains(err.Error(), "none.jsonl") {
		t.Errorf("missing file: error %v does not name it", err)
	}
}

func TestLoadDatasetFilters(t *testing.T) {
	t.Parallel()
	d, err := LoadDataset("testdata/dataset/prompts.jsonl", DatasetOptions{MinInputTokens: 3, MaxInputTokens: 5})
	if err != nil {
		t.Fatal(err)
	}
	// Only "no length given" (3 tokens) is within [3, 5]; 2 and 6 are not.
	if d.Len() != 1 || d.Entry(0).Prompt != "no length given" {
		t.Errorf("kept %+v", summarise(d))
	}
	if p := d.Profile(); p.Read != 3 || p.Filtered != 2 || p.Count != 1 {
		t.Errorf("profile counts read %d filtered %d count %d, want 3 2 1", p.Read, p.Filtered, p.Count)
	}
}

// skewedEntries returns n entries with lognormal input lengths (median
// 200, a long tail) and their index as output length.
func skewedEntries(n int) []DatasetEntry {
	rng := rand.New(rand.NewPCG(42, 42))
	out := make([]DatasetEntry, n)
	for i := range out {
		out[i] = DatasetEntry{InputTokens: int(200*math.Exp(1.2*rng.NormFloat64())) + 1, OutputTokens: i + 1, Line: i + 1}
	}
	return out
}

func TestStratifiedSamplePreservesPercentiles(t *testing.T) {
	t.Parallel()
	all := skewedEntries(10_000)
	full := newDatasetProfile("", "", "", all).Input
	for _, seed := range []uint64{1, 2, 3} {
		sample := stratifiedSample(all, 200, seed)
		if len(sample) != 200 {
			t.Fatalf("sample has %d entries", len(sample))
		}
		got := newDatasetProfile("", "", "", sample).Input
		// Each sampled percentile must fall within one stratum (0.5% of
		// the data) of the full data's: check it against the full data's
		// percentiles half a percent either side.
		for _, p := range []struct {
			name string
			q    float64
			v    int
		}{{"P50", 0.50, got.P50}, {"P90", 0.90, got.P90}, {"P99", 0.99, got.P99}} {
			lo, hi := quantileOf(all, p.q-0.006), quantileOf(all, p.q+0.006)
			if p.v < lo || p.v > hi {
				t.Errorf("seed %d: sample %s = %d, full data's is %d (band %d..%d)", seed, p.name, p.v, map[string]int{"P50": full.P50, "P90": full.P90, "P99": full.P99}[p.name], lo, hi)
			}
		}
		// File order is kept.
		if !slices.IsSortedFunc(sample, func(a, b DatasetEntry) int { return a.Line - b.Line }) {
			t.Errorf("seed %d: sample is not in file order", seed)
		}
	}
	// The same seed keeps the same entries; another seed others.
	lines := func(es []DatasetEntry) []int {
		out := make([]int, len(es))
		for i, e := range es {
			out[i] = e.Line
		}
		return out
	}
	if !slices.Equal(lines(stratifiedSample(all, 50, 7)), lines(stratifiedSample(all, 50, 7))) {
		t.Error("same seed, different samples")
	}
	if slices.Equal(lines(stratifiedSample(all, 50, 7)), lines(stratifiedSample(all, 50, 8))) {
		t.Error("different seeds, same sample")
	}
}

// quantileOf returns the nearest-rank q-quantile of the entries' input
// lengths.
func quantileOf(entries []DatasetEntry, q float64) int {
	xs := make([]int, len(entries))
	for i, e := range entries {
		xs[i] = e.InputTokens
	}
	slices.Sort(xs)
	i := min(max(int(math.Ceil(q*float64(len(xs))))-1, 0), len(xs)-1)
	return xs[i]
}

func TestStratifiedSampleSizes(t *testing.T) {
	t.Parallel()
	all := skewedEntries(10)
	tests := []struct {
		n, want int
	}{
		{0, 10},  // 0 keeps everything
		{10, 10}, // as many as there are keeps everything
		{25, 10}, // more than there are keeps everything, no duplicates
		{1, 1},   // one stratum: one entry
		{3, 3},   // uneven strata: 3, 3 and 4 entries
	}
	for _, tt := range tests {
		if got := len(stratifiedSample(all, tt.n, 1)); got != tt.want {
			t.Errorf("sample %d of 10: got %d entries, want %d", tt.n, got, tt.want)
		}
	}
}

func TestLoadDatasetSampleAndProfile(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	for i := range 100 {
		// Prompts of 1..100 tokens ("the" repeated), outputs of 2i.
		fmt.Fprintf(&b, "{\"prompt\": %q, \"output_tokens\": %d}\n", strings.Repeat(" the", i+1), 2*(i+1))
	}
	path := writeTemp(t, "p.jsonl", b.String())
	d, err := LoadDataset(path, DatasetOptions{Sample: 10, Seed: 5, MaxInputTokens: 90})
	if err != nil {
		t.Fatal(err)
	}
	p := d.Profile()
	if p.Count != 10 || p.Read != 100 || p.Filtered != 10 {
		t.Fatalf("count %d read %d filtered %d, want 10 100 10", p.Count, p.Read, p.Filtered)
	}
	// 90 entries in 10 strata of 9: sample i lies in [9i+1, 9i+9].
	for i := range d.Len() {
		if in := d.Entry(i).InputTokens; in < 9*i+1 || in > 9*i+9 {
			t.Errorf("entry %d has %d tokens, outside stratum [%d, %d]", i, in, 9*i+1, 9*i+9)
		}
	}
	s := p.String()
	for _, w := range []string{path, "jsonl, cl100k_base", "10 of 100 entries", "10 outside the length bounds", "input tokens   P50", "output tokens  P50"} {
		if !strings.Contains(s, w) {
			t.Errorf("profile %q lacks %q", s, w)
		}
	}
}

func TestDatasetProfileString(t *testing.T) {
	t.Parallel()
	p := newDatasetProfile("x.csv", FormatCSV, Cl100kBase, []DatasetEntry{
		{InputTokens: 10, OutputTokens: 5}, {InputTokens: 20}, {InputTokens: 30, OutputTokens: 7},
	})
	p.Read = 3
	want := "dataset x.csv (csv, cl100k_base): 3 of 3 entries\n" +
		"  input tokens   P50 20  P90 30  P99 30  (min 10, max 30, mean 20.0)\n" +
		"  output tokens  P50 5  P90 7  P99 7  (min 5, max 7, mean 6.0) over 2 entries that give one"
	if got := p.String(); got != want {
		t.Errorf("String() =\n%s\nwant\n%s", got, want)
	}
	p.Output = LengthSummary{}
	if got := p.String(); !strings.Contains(got, "not given by the dataset") {
		t.Errorf("no output lengths: %s", got)
	}
}

// FuzzDataset feeds arbitrary bytes to every parser: none may panic or
// hang, and every entry they return must point at a line of the input.
func FuzzDataset(f *testing.F) {
	for _, name := range []string{"sharegpt.json", "chat.jsonl", "images.jsonl", "prompts.jsonl", "prompts.csv", "graded.jsonl"} {
		data, err := os.ReadFile(filepath.Join("testdata/dataset", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		lines := strings.Count(string(data), "\n") + 1
		for _, format := range DatasetFormats() {
			entries, skipped, err := parseDataset(format, data)
			if err != nil {
				continue
			}
			if skipped < 0 {
				t.Fatalf("%s: skipped %d", format, skipped)
			}
			for _, e := range entries {
				if e.line < 1 || e.line > lines {
					t.Fatalf("%s: entry on line %d of %d", format, e.line, lines)
				}
			}
		}
	})
}
