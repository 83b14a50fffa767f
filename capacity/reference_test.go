package capacity

import (
	"strings"
	"testing"
	"time"

	"github.com/inferload/inferload/sim"
)

// TestReferenceTable regenerates the reference table of docs/sim.md:
//
//	go test ./capacity -run TestReferenceTable -v
//
// and checks the shape the published vLLM 0.4 figures show: near-linear
// growth to 100 users, saturation between 100 and 150, decline at 200,
// with request throughput, TTFT P95 and TPOT P95 within 25% of the
// published figures at every level.
func TestReferenceTable(t *testing.T) {
	t.Parallel()
	table, err := Reference(DefaultReference())
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("\n%s", table)
	rows := table.Rows
	if len(rows) != 4 {
		t.Fatalf("got %d rows, want 4", len(rows))
	}
	x := func(i int) float64 { return rows[i].Throughput }
	shape := []struct {
		what string
		ok   bool
	}{
		{"near-linear growth 50→100 (×1.4 or more)", x(1) >= 1.4*x(0)},
		{"saturation 100→150 (within ×0.95–1.2)", x(2) >= 0.95*x(1) && x(2) <= 1.2*x(1)},
		{"decline 150→200", x(3) < x(2)},
		{"queueing takes over TTFT past saturation (×2 per level from 100 users)", rows[2].TTFTP95 > 2*rows[1].TTFTP95 && rows[3].TTFTP95 > 2*rows[2].TTFTP95},
		{"per-token time grows with load", rows[0].TPOTP95 < rows[1].TPOTP95 && rows[1].TPOTP95 < rows[2].TPOTP95 && rows[2].TPOTP95 < rows[3].TPOTP95},
		{"KV cache is the limit at 200 users", rows[3].MeanKVUsage > 0.85 && rows[3].Preemptions > 0},
	}
	for _, s := range shape {
		if !s.ok {
			t.Errorf("shape: %s does not hold", s.what)
		}
	}
	for _, r := range rows {
		ref := r.Reference
		figures := []struct {
			what     string
			got, pub float64
		}{
			{"req/s", r.Throughput, ref.Throughput},
			{"TTFT P95 (s)", r.TTFTP95.Seconds(), ref.TTFTP95.Seconds()},
			{"TPOT P95 (s)", r.TPOTP95.Seconds(), ref.PerTokenP95.Seconds()},
		}
		for _, f := range figures {
			if f.got < 0.75*f.pub || f.got > 1.25*f.pub {
				t.Errorf("%d users: %s %.3f, more than 25%% from the published %.3f", r.Concurrency, f.what, f.got, f.pub)
			}
		}
	}
}

func TestReferenceIsDeterministic(t *testing.T) {
	t.Parallel()
	spec := DefaultReference()
	spec.Profile, _ = sim.LookupProfile("tiny")
	spec.Concurrency, spec.Warmup, spec.Duration, spec.Reference = []int{8, 32}, time.Second, 5*time.Second, nil
	spec.Prompts, spec.Outputs = Mix{{64, 3}, {256, 1}}, Mix{{16, 1}, {64, 1}}
	a, err := Reference(spec)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := Reference(spec)
	if a.String() != b.String() {
		t.Errorf("same spec and seed gave different tables:\n%s\n%s", a, b)
	}
	if !strings.Contains(a.String(), "(–)") {
		t.Errorf("a table without references should mark them missing:\n%s", a)
	}
	if a.Rows[1].Throughput <= a.Rows[0].Throughput {
		t.Errorf("4× the users on an unsaturated engine should raise throughput: %v then %v", a.Rows[0].Throughput, a.Rows[1].Throughput)
	}
}

func TestReferenceRejectsBadSpecs(t *testing.T) {
	t.Parallel()
	base := DefaultReference()
	tests := []struct {
		name    string
		edit    func(*ReferenceSpec)
		wantErr string
	}{
		{"no levels", func(s *ReferenceSpec) { s.Concurrency = nil }, "no concurrency"},            // nothing to run
		{"zero users", func(s *ReferenceSpec) { s.Concurrency = []int{0} }, "concurrency must be"}, // a level must have users
		{"no window", func(s *ReferenceSpec) { s.Duration = 0 }, "duration"},                       // nothing to measure
		{"empty mix", func(s *ReferenceSpec) { s.Prompts = nil }, "prompt mix is empty"},           // nothing to send
		{"bad weight", func(s *ReferenceSpec) { s.Outputs = Mix{{128, 0}} }, "weight"},             // weights must be positive
		{"too long", func(s *ReferenceSpec) { s.Prompts = Mix{{5000, 1}} }, "max_model_len"},       // requests must fit the model
		{"bad profile", func(s *ReferenceSpec) { s.Profile.MaxNumSeqs = 0 }, "max_num_seqs"},       // the profile is validated
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			spec := base
			spec.Concurrency = []int{2}
			tt.edit(&spec)
			if _, err := Reference(spec); err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("got %v, want an error mentioning %q", err, tt.wantErr)
			}
		})
	}
}

func TestReferenceSpecWithProfile(t *testing.T) {
	t.Parallel()
	spec := DefaultReference()
	same, _ := sim.LookupProfile(sim.DefaultProfile)
	same.NumGPUBlocks = 5000 // a variant of the default keeps the comparison
	if got := spec.WithProfile(same); len(got.Reference) != 4 || got.Profile.NumGPUBlocks != 5000 {
		t.Errorf("variant of the default profile: %d references, %d blocks; want 4 and 5000", len(got.Reference), got.Profile.NumGPUBlocks)
	}
	other, _ := sim.LookupProfile("h100-8b")
	if got := spec.WithProfile(other); got.Reference != nil || got.Profile.Name != "h100-8b" {
		t.Errorf("another profile kept the a100-7b references: %+v", got.Reference)
	}
}
