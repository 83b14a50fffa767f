package sim

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// testProfile is a small engine with round numbers, so a test can work out
// every step by hand: 1 ms per step, 10 µs per prefill token, 100 µs per
// decoding sequence, nothing for KV reads.
func testProfile() Profile {
	return Profile{
		Name: "test", Model: "test-model",
		MaxModelLen: 256, MaxNumSeqs: 4, MaxNumBatchedTokens: 1024,
		BlockSize: 4, NumGPUBlocks: 256, KVWatermark: -1,
		Cost: CostModel{
			StepOverhead:    time.Millisecond,
			PrefillPerToken: 10 * time.Microsecond,
			DecodePerSeq:    100 * time.Microsecond,
		},
		OutputLength: LengthDist{Kind: "fixed", Mean: 8},
	}
}

func newTestEngine(t *testing.T, edit func(*Profile)) *Engine {
	t.Helper()
	p := testProfile()
	if edit != nil {
		edit(&p)
	}
	e, err := NewEngine(p)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func mustAdd(t *testing.T, e *Engine, prompt, out int, now time.Duration) *Sequence {
	t.Helper()
	s, err := e.Add(Request{PromptTokens: prompt, OutputTokens: out}, now)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// stepSummary is what a test checks of one step.
type stepSummary struct {
	prefill, decode, tokens, running, waiting int
	duration                                  time.Duration
}

func summarize(e *Engine, r *StepResult) stepSummary {
	return stepSummary{r.PrefillTokens, r.DecodeSeqs, len(r.Tokens), e.Running(), e.Waiting(), r.Duration}
}

// runSteps steps the engine from now until it is idle or max steps pass,
// returning each step's summary and the time it ended.
func runSteps(e *Engine, now time.Duration, maxSteps int) ([]stepSummary, time.Duration) {
	var out []stepSummary
	for range maxSteps {
		if !e.HasWork() {
			break
		}
		r := e.Step(now)
		out = append(out, summarize(e, r))
		now = r.End()
	}
	return out, now
}

func TestEngineBatching(t *testing.T) {
	t.Parallel()
	e := newTestEngine(t, nil)
	for range 6 {
		mustAdd(t, e, 10, 2, 0)
	}
	got, _ := runSteps(e, 0, 10)
	want := []stepSummary{
		// 4 of 6 fit max_num_seqs; their prompts run in one step and each
		// samples its first token: 1 ms + 40 × 10 µs.
		{prefill: 40, tokens: 4, running: 4, waiting: 2, duration: 1400 * time.Microsecond},
		// They decode their last token together (1 ms + 4 × 100 µs) and
		// leave; the two waiting are admitted in the next step.
		{decode: 4, tokens: 4, running: 0, waiting: 2, duration: 1400 * time.Microsecond},
		// The late pair's prefill.
		{prefill: 20, tokens: 2, running: 2, waiting: 0, duration: 1200 * time.Microsecond},
		// Their last decode.
		{decode: 2, tokens: 2, running: 0, waiting: 0, duration: 1200 * time.Microsecond},
	}
	assertSteps(t, got, want)
}

func assertSteps(t *testing.T, got, want []stepSummary) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("got %d steps, want %d:\n got %+v\nwant %+v", len(got), len(want), got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("step %d: got %+v, want %+v", i, got[i], want[i])
		}
	}
}

func TestEngineChunkedPrefill(t *testing.T) {
	t.Parallel()
	// A budget of 16 tokens per step: a running decode takes 1, the new
	// 40-token prompt gets the other 15 in each step until it is done.
	e := newTestEngine(t, func(p *Profile) { p.MaxNumBatchedTokens = 16 })
	dec := mustAdd(t, e, 4, 10, 0)
	r := e.Step(0) // the decoder's own prefill
	now := r.End()
	long := mustAdd(t, e, 40, 1, now)
	got, _ := runSteps(e, now, 3)
	want := []stepSummary{
		{prefill: 15, decode: 1, tokens: 1, running: 2, duration: 1250 * time.Microsecond}, // chunk 1 of 40
		{prefill: 15, decode: 1, tokens: 1, running: 2, duration: 1250 * time.Microsecond}, // chunk 2
		// The last 10 tokens: the long prompt samples its only token and
		// finishes in the same step.
		{prefill: 10, decode: 1, tokens: 2, running: 1, duration: 1200 * time.Microsecond},
	}
	assertSteps(t, got, want)
	if long.Generated() != 1 || dec.Generated() != 4 {
		t.Errorf("generated: long %d (want 1), decoder %d (want 4)", long.Generated(), dec.Generated())
	}
}

func TestEnginePrefillFirstWithoutChunking(t *testing.T) {
	t.Parallel()
	// vLLM V0's default scheduler: whole prompts, up to a 256-token budget,
	// in prefill-only steps that go before the running batch's decodes.
	e := newTestEngine(t, func(p *Profile) { p.DisableChunkedPrefill, p.MaxNumBatchedTokens = true, 256 })
	dec := mustAdd(t, e, 4, 10, 0)
	now := e.Step(0).End() // the decoder's own prefill
	mustAdd(t, e, 150, 2, now)
	mustAdd(t, e, 150, 2, now)
	got, _ := runSteps(e, now, 3)
	want := []stepSummary{
		// Only one 150-token prompt fits the budget; the decoder stalls.
		{prefill: 150, tokens: 1, running: 2, waiting: 1, duration: 2500 * time.Microsecond},
		// The second prompt is never chunked into the first step's leftover
		// 106 tokens: it gets a prefill step of its own, the decoder stalls again.
		{prefill: 150, tokens: 1, running: 3, duration: 2500 * time.Microsecond},
		// Nothing waits, so all three decode; the two short ones finish.
		{decode: 3, tokens: 3, running: 1, duration: 1300 * time.Microsecond},
	}
	assertSteps(t, got, want)
	if dec.Generated() != 2 {
		t.Errorf("the decoder generated %d tokens over the stalls, want 2", dec.Generated())
	}
}

func TestEngineKVExhaustionPreempts(t *testing.T) {
	t.Parallel()
	// 6 blocks of 4 tokens. Two requests of 8 prompt + 8 output tokens
	// need 4 blocks each at the end: both fit at admission (2 + 2 blocks),
	// but growing past 12 tokens each they cannot both stay.
	e := newTestEngine(t, func(p *Profile) { p.NumGPUBlocks, p.MaxModelLen = 6, 24 })
	first := mustAdd(t, e, 8, 8, 0)
	second := mustAdd(t, e, 8, 8, 0)
	var preemptedAt []int
	now := time.Duration(0)
	for step := 0; e.HasWork() && step < 100; step++ {
		r := e.Step(now)
		now = r.End()
		if r.Preempted > 0 {
			preemptedAt = append(preemptedAt, step)
		}
		if e.KVUsage() > 1 {
			t.Fatalf("step %d: KV usage %g > 1", step, e.KVUsage())
		}
	}
	if len(preemptedAt) == 0 {
		t.Fatal("no preemption although the cache cannot hold both requests")
	}
	// The newest arrival is the victim; the oldest never is.
	if first.Preemptions() != 0 || second.Preemptions() == 0 {
		t.Errorf("preemptions: first %d (want 0), second %d (want > 0)", first.Preemptions(), second.Preemptions())
	}
	if first.Generated() != 8 || second.Generated() != 8 {
		t.Errorf("generated %d and %d, want 8 and 8: preemption must not lose or repeat tokens", first.Generated(), second.Generated())
	}
	c := e.Counters()
	if c.Preemptions != int64(second.Preemptions()) || c.RecomputedTokens == 0 {
		t.Errorf("counters %+v: want preemptions %d and recomputed tokens > 0", c, second.Preemptions())
	}
	if e.KVUsage() != 0 || e.pool.numFree != 6 {
		t.Errorf("after all finished: KV usage %g, free blocks %d; want 0 and 6", e.KVUsage(), e.pool.numFree)
	}
}

func TestEngineAdmissionControl(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name         string
		queueLimit   int
		prompt, out  int
		waitingFirst int // requests already waiting
		batch        bool
		wantErr      error
	}{
		// Unlimited queue (vLLM's default) takes anything that fits.
		{"unlimited", 0, 10, 10, 50, false, nil},
		// Below the limit is accepted.
		{"under limit", 3, 10, 10, 2, false, nil},
		// At the limit the next request is refused.
		{"queue full", 3, 10, 10, 3, false, ErrQueueFull},
		// A request longer than max_model_len (256) is refused whatever
		// the queue.
		{"too long", 0, 200, 57, 0, false, ErrTooLong},
		// Exactly max_model_len fits.
		{"exactly max", 0, 200, 56, 0, false, nil},
		// A batch of pairs read apart (a reranker's) is not bounded by
		// max_model_len: its caller checked each pair.
		{"batch beyond max", 0, 600, 1, 0, true, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newTestEngine(t, func(p *Profile) { p.QueueLimit = tt.queueLimit })
			for range tt.waitingFirst {
				mustAdd(t, e, 1, 1, 0)
			}
			_, err := e.Add(Request{PromptTokens: tt.prompt, OutputTokens: tt.out, Batch: tt.batch}, 0)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("Add: got %v, want %v", err, tt.wantErr)
			}
		})
	}
}

func TestEngineQueueDrainsBelowLimit(t *testing.T) {
	t.Parallel()
	e := newTestEngine(t, func(p *Profile) { p.QueueLimit, p.MaxNumSeqs = 1, 1 })
	mustAdd(t, e, 4, 4, 0)
	if _, err := e.Add(Request{PromptTokens: 4, OutputTokens: 4}, 0); !errors.Is(err, ErrQueueFull) {
		t.Fatalf("second request with one waiting and limit 1: got %v, want ErrQueueFull", err)
	}
	e.Step(0) // the first moves to running, emptying the queue
	if _, err := e.Add(Request{PromptTokens: 4, OutputTokens: 4}, 0); err != nil {
		t.Fatalf("after the queue drained: %v", err)
	}
}

func hashedRequest(text string, out int) Request {
	h := NewPromptHasher(4)
	h.AddText(text)
	return Request{PromptTokens: h.Tokens(), BlockHashes: h.BlockHashes(), OutputTokens: out}
}

func words(prefix string, n int) string {
	var b strings.Builder
	for i := range n {
		b.WriteString(prefix)
		b.WriteString(string(rune('a' + i%26)))
		b.WriteString(" ")
	}
	return b.String()
}

func TestEnginePrefixCache(t *testing.T) {
	t.Parallel()
	shared := words("sys", 16) // 4 full blocks of 4
	tests := []struct {
		name        string
		first, then string
		disable     bool
		wantCached  int
	}{
		// A shared 16-token system prompt is served from cache.
		{"shared prefix", shared + "question one", shared + "question two", false, 16},
		// An identical prompt still computes its last block's final token
		// (it samples the next token), so 3 of 4 blocks hit.
		{"identical prompt", shared, shared, false, 12},
		// Different text from the first word: no hit.
		{"no common prefix", shared, words("other", 16), false, 0},
		// A block matches only if everything before it matches too.
		{"same tail, different head", "x " + shared, "y " + shared, false, 0},
		// --no-enable-prefix-caching.
		{"caching disabled", shared + "q1", shared + "q2", true, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newTestEngine(t, func(p *Profile) { p.DisablePrefixCaching = tt.disable })
			if _, err := e.Add(hashedRequest(tt.first, 2), 0); err != nil {
				t.Fatal(err)
			}
			_, now := runSteps(e, 0, 10)
			second, err := e.Add(hashedRequest(tt.then, 2), now)
			if err != nil {
				t.Fatal(err)
			}
			r := e.Step(now)
			if second.CachedTokens() != tt.wantCached {
				t.Errorf("cached tokens: got %d, want %d", second.CachedTokens(), tt.wantCached)
			}
			if want := second.Request().PromptTokens - tt.wantCached; r.PrefillTokens != want {
				t.Errorf("prefill tokens computed: got %d, want %d", r.PrefillTokens, want)
			}
			c := e.Counters()
			if c.PrefixHitTokens != int64(tt.wantCached) {
				t.Errorf("hit counter %d, want %d", c.PrefixHitTokens, tt.wantCached)
			}
		})
	}
}

func TestEngineAbortFreesBlocks(t *testing.T) {
	t.Parallel()
	e := newTestEngine(t, func(p *Profile) { p.MaxNumSeqs = 1 })
	running := mustAdd(t, e, 16, 100, 0)
	waiting := mustAdd(t, e, 16, 100, 0)
	e.Step(0)
	if e.KVUsage() == 0 {
		t.Fatal("running request holds no KV blocks")
	}
	e.Abort(waiting)
	e.Abort(running)
	e.Abort(running) // twice is harmless
	if e.HasWork() || e.KVUsage() != 0 {
		t.Errorf("after aborting both: has work %v, KV usage %g; want false and 0", e.HasWork(), e.KVUsage())
	}
	if r := e.Step(time.Second); !r.Idle() {
		t.Errorf("step after aborts ran %+v, want idle", *r)
	}
}

func TestEngineWatermarkHoldsBackAdmission(t *testing.T) {
	t.Parallel()
	// 10 blocks, watermark 20% = 2 blocks. The first request takes 4
	// blocks; a second needing 5 would leave 1 < 2 free, so it waits
	// although 6 are free.
	e := newTestEngine(t, func(p *Profile) { p.NumGPUBlocks, p.KVWatermark, p.MaxModelLen = 10, 0.2, 40 })
	mustAdd(t, e, 16, 20, 0)
	mustAdd(t, e, 20, 1, 0)
	e.Step(0)
	if e.Running() != 1 || e.Waiting() != 1 {
		t.Errorf("running %d waiting %d, want 1 and 1", e.Running(), e.Waiting())
	}
}

func TestCostModelStepTime(t *testing.T) {
	t.Parallel()
	c := CostModel{StepOverhead: 10 * time.Millisecond, PrefillPerToken: 50 * time.Microsecond,
		DecodePerSeq: 20 * time.Microsecond, KVReadPerToken: 100 * time.Nanosecond, WaitingPerRequest: time.Microsecond}
	tests := []struct {
		prefill, decode, kv, waiting int
		want                         time.Duration
	}{
		{0, 0, 0, 0, 10 * time.Millisecond},         // overhead alone
		{100, 0, 100, 0, 15010 * time.Microsecond},  // 100 prompt tokens: +5 ms compute, +10 µs KV
		{0, 50, 25000, 0, 13500 * time.Microsecond}, // 50 decodes over 500-token contexts: +1 ms + 2.5 ms
		{0, 0, 0, 1000, 11 * time.Millisecond},      // a long queue costs CPU time
		{512, 64, 40000, 10, 10*time.Millisecond + 25600*time.Microsecond + 1280*time.Microsecond + 4*time.Millisecond + 10*time.Microsecond}, // all terms add
	}
	for _, tt := range tests {
		if got := c.StepTime(tt.prefill, tt.decode, tt.kv, tt.waiting); got != tt.want {
			t.Errorf("StepTime(%d, %d, %d, %d) = %s, want %s", tt.prefill, tt.decode, tt.kv, tt.waiting, got, tt.want)
		}
	}
}

func TestBlockPoolEvictsLeastRecentlyFreed(t *testing.T) {
	t.Parallel()
	p := newBlockPool(3)
	blocks, _ := p.allocate(3, nil)
	for i, b := range blocks {
		p.register(b, uint64(10+i))
	}
	p.release(blocks) // queued tail-first: block 2, then 1, then 0
	if _, ok := p.allocate(4, nil); ok {
		t.Fatal("allocated 4 of 3 blocks")
	}
	got, _ := p.allocate(1, nil)
	if got[0] != blocks[2] {
		t.Errorf("evicted block %d first, want the sequence's tail block %d", got[0], blocks[2])
	}
	if _, ok := p.lookup(12); ok {
		t.Error("hash of the evicted block still cached")
	}
	b, ok := p.lookup(10)
	if !ok {
		t.Fatal("hash of a free but unevicted block lost")
	}
	p.share(b)
	if p.numFree != 1 || p.used() != 2 {
		t.Errorf("after a hit on a free block: %d free, %d used; want 1 and 2", p.numFree, p.used())
	}
}

func TestEngineAdmitsOnlyArrivedRequests(t *testing.T) {
	t.Parallel()
	e := newTestEngine(t, nil)
	mustAdd(t, e, 4, 1, 5*time.Millisecond)
	// A step that started before the request arrived cannot include it.
	if r := e.Step(0); !r.Idle() || e.Waiting() != 1 {
		t.Fatalf("step at 0 ran %+v with %d waiting; want idle, 1 waiting", *r, e.Waiting())
	}
	if r := e.Step(5 * time.Millisecond); len(r.Tokens) != 1 {
		t.Fatalf("step at the arrival time emitted %d tokens, want 1", len(r.Tokens))
	}
}
