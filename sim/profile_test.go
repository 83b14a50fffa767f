package sim

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestPresetsAreValid(t *testing.T) {
	t.Parallel()
	names := Profiles()
	for _, want := range []string{"a100-7b", "h100-8b", "h100x4-70b", "cpu-small", "tiny"} {
		if !strings.Contains(strings.Join(names, ","), want) {
			t.Errorf("preset %q missing from %v", want, names)
		}
	}
	for _, name := range names {
		p, err := LookupProfile(name)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if err := p.Validate(); err != nil {
			t.Errorf("%s: %v", name, err)
		}
		if p.Name != name {
			t.Errorf("preset %q calls itself %q", name, p.Name)
		}
	}
}

func TestLookupProfile(t *testing.T) {
	t.Parallel()
	def, err := LookupProfile("")
	if err != nil || def.Name != DefaultProfile {
		t.Fatalf(`LookupProfile("") = %q, %v; want the default %q`, def.Name, err, DefaultProfile)
	}
	_, err = LookupProfile("a100-70b")
	if err == nil || !strings.Contains(err.Error(), "h100x4-70b") {
		t.Errorf("unknown profile error %v should list the valid names", err)
	}
	// Callers get their own copy.
	a, _ := LookupProfile("tiny")
	a.MaxNumSeqs = 1
	b, _ := LookupProfile("tiny")
	if b.MaxNumSeqs == 1 {
		t.Error("changing a looked-up profile changed the preset")
	}
}

func TestParseProfileYAML(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		yaml    string
		check   func(Profile) string // returns a complaint, or ""
		wantErr string
	}{
		{
			// A preset with two overrides keeps everything else.
			name: "base override",
			yaml: "base: a100-7b\nname: small-kv\nnum_gpu_blocks: 3000\nfaults:\n  reset: 0.01\n",
			check: func(p Profile) string {
				if p.NumGPUBlocks != 3000 || p.MaxNumSeqs != 256 || p.Faults.Reset != 0.01 || p.Name != "small-kv" {
					return "overrides or inherited fields wrong"
				}
				return ""
			},
		},
		{
			// A profile written out in full, with durations and faults.
			name: "full profile",
			yaml: `name: custom
model: my-model
max_model_len: 1024
max_num_seqs: 8
max_num_batched_tokens: 256
block_size: 16
num_gpu_blocks: 128
queue_limit: 10
queue_full_status: 503
cost: {step_overhead: 5ms, prefill_per_token: 20us, decode_per_seq: 50us, kv_read_per_token: 10ns}
output_length: {kind: uniform, min: 10, max: 20}
faults:
  status: {503: 0.1}
  stall: {fraction: 0.05, duration: 2s}
`,
			check: func(p Profile) string {
				if p.Cost.PrefillPerToken != 20*time.Microsecond || p.QueueFullStatus != 503 ||
					p.Faults.Status[503] != 0.1 || p.Faults.Stall.Duration != 2*time.Second || p.KVWatermark != 0.01 {
					return "fields not decoded or defaults not applied"
				}
				return ""
			},
		},
		// A misspelt field is an error, not a silent default.
		{name: "unknown field", yaml: "base: tiny\nmax_num_seq: 8\n", wantErr: "max_num_seq"},
		// Validation names the field.
		{name: "invalid value", yaml: "base: tiny\nmax_num_seqs: 0\n", wantErr: "max_num_seqs"},
		// A request must always fit the cache.
		{name: "cache too small", yaml: "base: tiny\nnum_gpu_blocks: 10\n", wantErr: "exceeds the KV cache"},
		// Without chunked prefill the longest prompt must fit one step's budget.
		{name: "budget below context", yaml: "base: tiny\ndisable_chunked_prefill: true\n", wantErr: "below max_model_len"},
		// A base that does not exist lists those that do.
		{name: "unknown base", yaml: "base: nope\n", wantErr: "a100-7b"},
		// Fault fractions are checked too.
		{name: "bad fault", yaml: "base: tiny\nfaults: {reset: 2}\n", wantErr: "reset fraction"},
		// Framebuffer arithmetic must fit the GPU.
		{name: "does not fit GPU", yaml: "base: a100-7b\nnum_gpu_blocks: 100000\n", wantErr: "exceeds memory_mib"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := ParseProfile([]byte(tt.yaml))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("got error %v, want one mentioning %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if msg := tt.check(p); msg != "" {
				t.Errorf("%s: %+v", msg, p)
			}
		})
	}
}

func TestLoadProfileFile(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "p.yaml")
	if err := os.WriteFile(path, []byte("base: h100-8b\nmax_num_seqs: 128\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	p, err := LoadProfile(path)
	if err != nil || p.MaxNumSeqs != 128 || p.Model != "meta-llama/Llama-3.1-8B-Instruct" {
		t.Fatalf("LoadProfile = %+v, %v", p, err)
	}
	if _, err := LoadProfile(filepath.Join(t.TempDir(), "missing.yaml")); err == nil {
		t.Error("missing file: no error")
	}
}

func TestParseFaults(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in      string
		want    Faults
		wantErr string
	}{
		// Empty and "none" mean no faults.
		{in: "", want: Faults{}},
		{in: "none", want: Faults{}},
		// Every kind at once, with durations.
		{
			in: "status503=0.05,status429=0.01,reset=0.01,malformed=0.02,stall=0.02:5s,slow_first_byte=0.03:1.5s,missing_done=0.04,error_event=0.05",
			want: Faults{Status: map[int]float64{503: 0.05, 429: 0.01}, Reset: 0.01, Malformed: 0.02,
				Stall: DelayFault{0.02, 5 * time.Second}, SlowFirstByte: DelayFault{0.03, 1500 * time.Millisecond},
				MissingDone: 0.04, ErrorEvent: 0.05},
		},
		// Spaces around items are fine.
		{in: " reset=0.5 , malformed=0.5 ", want: Faults{Reset: 0.5, Malformed: 0.5}},
		// Errors say what is wrong and how to fix it.
		{in: "resett=0.1", wantErr: "unknown fault"},
		{in: "reset", wantErr: "NAME=FRACTION"},
		{in: "reset=x", wantErr: "fraction"},
		{in: "stall=0.1", wantErr: "FRACTION:DURATION"},
		{in: "stall=0.1:soon", wantErr: "duration"},
		{in: "stall=0.1:0s", wantErr: "needs a duration"},
		{in: "status=0.1", wantErr: "needs a code"},
		{in: "status200=0.1", wantErr: "not an HTTP error status"},
		{in: "reset=1.5", wantErr: "[0,1]"},
		{in: "reset=0.6,malformed=0.6", wantErr: "sum to"},
	}
	for _, tt := range tests {
		got, err := ParseFaults(tt.in)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("ParseFaults(%q): error %v, want one mentioning %q", tt.in, err, tt.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("ParseFaults(%q): %v", tt.in, err)
			continue
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("ParseFaults(%q) (-want +got):\n%s", tt.in, diff)
		}
		// String gives back a form that parses to the same faults.
		again, err := ParseFaults(got.String())
		if err != nil || !cmp.Equal(got, again) {
			t.Errorf("round trip of %q via %q: %+v, %v", tt.in, got.String(), again, err)
		}
	}
}

func TestFaultsPick(t *testing.T) {
	t.Parallel()
	f := Faults{Status: map[int]float64{503: 0.1, 429: 0.1}, Reset: 0.2, Stall: DelayFault{0.1, time.Second}}
	tests := []struct {
		u    float64
		want Fault
	}{
		{0, Fault{Kind: FaultStatus, Status: 429}},            // status codes come first, ascending
		{0.0999, Fault{Kind: FaultStatus, Status: 429}},       // up to 429's share
		{0.1, Fault{Kind: FaultStatus, Status: 503}},          // then the next code
		{0.25, Fault{Kind: FaultReset}},                       // then the kinds in FaultKind order
		{0.3999, Fault{Kind: FaultReset}},                     // the upper edge stays inside
		{0.4, Fault{Kind: FaultStall, Delay: time.Second}},    // a delay fault carries its duration
		{0.4999, Fault{Kind: FaultStall, Delay: time.Second}}, // just below the sum
		{0.5, Fault{}},    // from the sum on: no fault
		{0.9999, Fault{}}, // up to the top of the range
	}
	for _, tt := range tests {
		if got := f.Pick(tt.u); got != tt.want {
			t.Errorf("Pick(%g) = %+v, want %+v", tt.u, got, tt.want)
		}
	}
	// Over many draws each fault's share matches its fraction.
	rng := rand.New(rand.NewPCG(1, 2))
	counts := map[FaultKind]int{}
	const n = 100000
	for range n {
		counts[f.Pick(rng.Float64()).Kind]++
	}
	for kind, want := range map[FaultKind]float64{FaultStatus: 0.2, FaultReset: 0.2, FaultStall: 0.1, FaultNone: 0.5} {
		if got := float64(counts[kind]) / n; got < want-0.01 || got > want+0.01 {
			t.Errorf("%s share %.3f, want %.2f±0.01", kind, got, want)
		}
	}
}

func TestLengthDistSample(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		d      LengthDist
		lo, hi int     // every draw within
		mean   float64 // sample mean within 5%, if > 0
	}{
		{"fixed", LengthDist{Kind: "fixed", Mean: 100}, 100, 100, 100},                                   // always the mean
		{"uniform", LengthDist{Kind: "uniform", Min: 10, Max: 30}, 10, 30, 20},                           // inclusive range
		{"exponential", LengthDist{Kind: "exponential", Mean: 200}, 1, 1 << 30, 200},                     // mean as given
		{"lognormal", LengthDist{Kind: "lognormal", Mean: 256, Sigma: 0.8}, 1, 1 << 30, 256},             // parameterised by its mean
		{"clamped", LengthDist{Kind: "lognormal", Mean: 256, Sigma: 1.5, Min: 50, Max: 300}, 50, 300, 0}, // min and max clamp
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.d.Validate(); err != nil {
				t.Fatal(err)
			}
			rng := rand.New(rand.NewPCG(3, 4))
			sum := 0
			const n = 50000
			for range n {
				v := tt.d.Sample(rng)
				if v < tt.lo || v > tt.hi {
					t.Fatalf("draw %d outside [%d, %d]", v, tt.lo, tt.hi)
				}
				sum += v
			}
			if got := float64(sum) / n; tt.mean > 0 && (got < 0.95*tt.mean || got > 1.05*tt.mean) {
				t.Errorf("mean %.1f, want %.0f±5%%", got, tt.mean)
			}
		})
	}
	if err := (LengthDist{Kind: "gamma", Mean: 1}).Validate(); err == nil || !strings.Contains(err.Error(), "lognormal") {
		t.Errorf("unknown kind: error %v should list the kinds", err)
	}
}

func TestPromptHasher(t *testing.T) {
	t.Parallel()
	tests := []struct {
		text       string
		wantTokens int
		wantBlocks int
	}{
		{"", 0, 0},                           // empty prompt
		{"one", 1, 0},                        // a word is a token
		{"  leading and\ttrailing \n", 3, 0}, // any ASCII whitespace separates
		{"a b c d", 4, 1},                    // a full block of 4 gets a hash
		{"a b c d e f g h i", 9, 2},          // partial blocks get none
		{"naïve café, déjà-vu!", 5, 1},       // , and ! are tokens; UTF-8 and - stay inside words
		{"The cat  sat.", 4, 1},              // a full stop is its own token, as in BPE vocabularies
	}
	for _, tt := range tests {
		h := NewPromptHasher(4)
		h.AddText(tt.text)
		if h.Tokens() != tt.wantTokens || len(h.BlockHashes()) != tt.wantBlocks {
			t.Errorf("%q: %d tokens, %d blocks; want %d and %d", tt.text, h.Tokens(), len(h.BlockHashes()), tt.wantTokens, tt.wantBlocks)
		}
	}
	// Separate messages never merge words.
	h := NewPromptHasher(4)
	h.AddText("ab")
	h.AddText("cd")
	if h.Tokens() != 2 {
		t.Errorf("two messages of one word each: %d tokens, want 2", h.Tokens())
	}
}
