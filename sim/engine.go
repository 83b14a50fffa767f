package sim

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"time"
)

// Request is what the engine needs to know about one request. The HTTP
// layer settles everything random (the output length, faults) before it
// submits, so the engine itself is deterministic.
type Request struct {
	// PromptTokens is the prompt length in tokens (at least 1).
	PromptTokens int
	// BlockHashes are the chained hashes of the sequence's full blocks, as
	// PromptHasher makes them: the prompt's, then, where the caller knows
	// the output in advance, the blocks the output fills (AddReply), which
	// the cache keeps as they are computed, as vLLM does, so a later turn
	// whose prompt holds this reply reuses them. nil opts the request out
	// of prefix caching.
	BlockHashes []uint64
	// OutputTokens is exactly how many tokens to generate (at least 1).
	OutputTokens int
	// Batch marks a prompt that is a batch of sequences the model reads
	// apart, each within the context (a cross-encoder's query-document
	// pairs, checked by the caller): MaxModelLen does not bound it, the KV
	// cache's admission does.
	Batch bool
	// Ref is carried untouched for the caller (the HTTP stream it feeds).
	Ref any
}

// Errors Engine.Add returns; the HTTP layer maps them to statuses.
var (
	// ErrQueueFull: the waiting queue is at Profile.QueueLimit.
	ErrQueueFull = errors.New("waiting queue is full")
	// ErrTooLong: prompt + output exceeds Profile.MaxModelLen.
	ErrTooLong = errors.New("request exceeds the model's context length")
)

type seqState uint8

const (
	stateWaiting seqState = iota
	stateRunning
	stateFinished
	stateAborted
)

// Sequence is one request inside the engine. Its times are on the
// engine's clock (the `now` passed to Add and Step).
type Sequence struct {
	req   Request
	id    uint64
	state seqState

	arrival    time.Duration
	scheduled  time.Duration // first admission to the running batch
	firstToken time.Duration
	lastToken  time.Duration
	admitted   bool

	computed  int  // tokens whose KV is in the cache
	generated int  // tokens emitted
	prefilled bool // the current (re)computation reached the last token

	blocks       []int32
	hashed       int // prompt blocks registered in the prefix cache
	cachedTokens int // prefix-cache hit at first admission
	preemptions  int
}

// ID is the engine-assigned number of the sequence, in arrival order.
func (s *Sequence) ID() uint64 { return s.id }

// Request returns the request the sequence was created from.
func (s *Sequence) Request() Request { return s.req }

// Generated is the number of tokens emitted so far.
func (s *Sequence) Generated() int { return s.generated }

// Arrival is when the request was added.
func (s *Sequence) Arrival() time.Duration { return s.arrival }

// Scheduled is when the request first joined the running batch.
func (s *Sequence) Scheduled() time.Duration { return s.scheduled }

// FirstToken is when the first token was emitted.
func (s *Sequence) FirstToken() time.Duration { return s.firstToken }

// LastToken is when the latest token was emitted.
func (s *Sequence) LastToken() time.Duration { return s.lastToken }

// CachedTokens is how many prompt tokens the prefix cache supplied when
// the request was first admitted (OpenAI's usage.prompt_tokens_details).
func (s *Sequence) CachedTokens() int { return s.cachedTokens }

// Preemptions counts how often the sequence was evicted and recomputed.
func (s *Sequence) Preemptions() int { return s.preemptions }

// known is the number of tokens the sequence must have in its KV cache
// before it can sample the next one: the prompt plus what it generated.
func (s *Sequence) known() int { return s.req.PromptTokens + s.generated }

// TokenEvent says one sequence emitted one token in a step.
type TokenEvent struct {
	// Seq is the sequence that emitted the token.
	Seq *Sequence
	// Gap is the time since the sequence's previous token (0 for the
	// first): what vLLM's inter_token_latency histogram records.
	Gap time.Duration
	// First is true for the sequence's first token, Final for its last.
	First, Final bool
}

// StepResult is one engine step: what ran and what it produced. Tokens
// become visible at Start+Duration, when the step's kernels would finish.
type StepResult struct {
	// Start is the step's start on the engine clock; Duration its cost.
	Start, Duration time.Duration
	// PrefillTokens, DecodeSeqs and KVTokensRead are the cost model's inputs.
	PrefillTokens, DecodeSeqs, KVTokensRead int
	// Preempted counts sequences evicted to make room in this step.
	Preempted int
	// Tokens holds one event per sequence that emitted a token.
	Tokens []TokenEvent
}

// End is when the step's tokens are emitted.
func (r *StepResult) End() time.Duration { return r.Start + r.Duration }

// Idle reports whether the step had nothing to run.
func (r *StepResult) Idle() bool { return r.Duration == 0 }

// EngineCounters are cumulative totals since the engine started.
type EngineCounters struct {
	// Steps run and their total duration.
	Steps    int64
	BusyTime time.Duration
	// Preemptions of running sequences.
	Preemptions int64
	// PrefixQueryTokens and PrefixHitTokens count prompt tokens looked up
	// in, and found in, the prefix cache (vLLM counts tokens too).
	PrefixQueryTokens, PrefixHitTokens int64
	// PrefillTokens counts prompt tokens computed, recomputation included.
	PrefillTokens int64
	// RecomputedTokens counts the prefill tokens spent recomputing
	// preempted sequences: work thrown away by preemption.
	RecomputedTokens int64
	// GeneratedTokens counts tokens emitted.
	GeneratedTokens int64
}

type scheduled struct {
	seq *Sequence
	n   int
}

// Engine is a vLLM-like continuous-batching scheduler over a paged KV
// cache. It holds no goroutines and reads no clock: the caller passes the
// time to Add and Step, so a real-time loop and the virtual-time
// calibration drive the very same code. It is not safe for concurrent use.
type Engine struct {
	p        Profile
	pool     *blockPool
	waiting  seqQueue
	running  []*Sequence
	nextID   uint64
	counters EngineCounters

	res    StepResult
	sched  []scheduled
	hitBuf []int32
}

// NewEngine returns an idle engine for profile p.
func NewEngine(p Profile) (*Engine, error) {
	p = p.WithDefaults()
	if err := p.Validate(); err != nil {
		return nil, err
	}
	return &Engine{p: p, pool: newBlockPool(p.NumGPUBlocks)}, nil
}

// Add queues a request that arrived at now. It fails with ErrTooLong or
// ErrQueueFull (wrapped with the figures), or for a malformed request.
func (e *Engine) Add(r Request, now time.Duration) (*Sequence, error) {
	if r.PromptTokens < 1 || r.OutputTokens < 1 {
		return nil, fmt.Errorf("request needs >= 1 prompt and output token, got %d and %d", r.PromptTokens, r.OutputTokens)
	}
	if total := r.PromptTokens + r.OutputTokens; total > e.p.MaxModelLen && !r.Batch {
		return nil, fmt.Errorf("%w: %d prompt + %d output = %d tokens > max_model_len %d",
			ErrTooLong, r.PromptTokens, r.OutputTokens, total, e.p.MaxModelLen)
	}
	if e.p.QueueLimit > 0 && e.waiting.len() >= e.p.QueueLimit {
		return nil, fmt.Errorf("%w: %d requests waiting (queue_limit %d)", ErrQueueFull, e.waiting.len(), e.p.QueueLimit)
	}
	e.nextID++
	s := &Sequence{req: r, id: e.nextID, arrival: now}
	e.waiting.pushBack(s)
	return s, nil
}

// Abort drops a sequence (its client went away), freeing its KV blocks.
// Aborting a finished or already aborted sequence does nothing.
func (e *Engine) Abort(s *Sequence) {
	switch s.state {
	case stateWaiting:
		e.waiting.remove(s)
	case stateRunning:
		e.pool.release(s.blocks)
		s.blocks = s.blocks[:0]
		for i, r := range e.running {
			if r == s {
				e.running = append(e.running[:i], e.running[i+1:]...)
				break
			}
		}
	default:
		return
	}
	s.state = stateAborted
}

// Running is the size of the running batch.
func (e *Engine) Running() int { return len(e.running) }

// Waiting is the number of queued requests, preempted ones included.
func (e *Engine) Waiting() int { return e.waiting.len() }

// KVUsage is the fraction of KV blocks held by running sequences.
func (e *Engine) KVUsage() float64 { return float64(e.pool.used()) / float64(e.pool.size()) }

// Counters returns the cumulative totals.
func (e *Engine) Counters() EngineCounters { return e.counters }

// Profile returns the profile the engine runs, defaults filled in.
func (e *Engine) Profile() Profile { return e.p }

// HasWork reports whether a Step would run anything.
func (e *Engine) HasWork() bool { return len(e.running) > 0 || e.waiting.len() > 0 }

// Step runs one engine iteration starting at now, as vLLM V1's scheduler
// does: first every running sequence gets its next token or prefill chunk
// (preempting the newest running sequences when the KV cache is full), then,
// if nothing was preempted, waiting requests join while the token budget,
// max_num_seqs and free blocks allow, reusing cached prefix blocks. The
// result is valid until the next call; it is Idle when there was no work.
func (e *Engine) Step(now time.Duration) *StepResult {
	r := &e.res
	*r = StepResult{Start: now, Tokens: r.Tokens[:0]}
	e.sched = e.sched[:0]
	if e.p.DisableChunkedPrefill {
		r.Preempted = e.schedulePrefillFirst(now)
	} else {
		budget, preempted := e.scheduleRunning(e.p.MaxNumBatchedTokens)
		if preempted == 0 {
			e.scheduleWaiting(budget, now)
		}
		r.Preempted = preempted
	}
	if len(e.sched) == 0 {
		return r
	}
	e.price(r)
	e.commit(r)
	return r
}

// schedulePrefillFirst is vLLM V0's default policy: if any waiting
// request can be admitted, the step prefills admitted prompts only (whole,
// within the token budget) and the running batch waits; otherwise every
// running sequence decodes one token. It returns the number preempted.
func (e *Engine) schedulePrefillFirst(now time.Duration) int {
	e.scheduleWaiting(e.p.MaxNumBatchedTokens, now)
	if len(e.sched) > 0 {
		return 0
	}
	// Every running sequence is fully prefilled, so each needs one token;
	// the budget cannot bind (V0 did not apply it to decodes either).
	_, preempted := e.scheduleRunning(len(e.running))
	return preempted
}

// scheduleRunning gives each running sequence its next chunk, in order,
// evicting from the tail when blocks run out. It returns the budget left
// and the number of sequences preempted.
func (e *Engine) scheduleRunning(budget int) (int, int) {
	preempted := 0
	for i := 0; i < len(e.running) && budget > 0; i++ {
		s := e.running[i]
		n := min(s.known()-s.computed, budget)
		for !e.grow(s, n) {
			victim := e.running[len(e.running)-1]
			e.running = e.running[:len(e.running)-1]
			e.preempt(victim)
			preempted++
			if victim == s {
				return budget, preempted
			}
		}
		e.sched = append(e.sched, scheduled{s, n})
		budget -= n
	}
	return budget, preempted
}

// grow allocates the blocks s needs to hold n more tokens.
func (e *Engine) grow(s *Sequence, n int) bool {
	need := e.blocksFor(s.computed+n) - len(s.blocks)
	if need <= 0 {
		return true
	}
	var ok bool
	s.blocks, ok = e.pool.allocate(need, s.blocks)
	return ok
}

// preempt evicts s by recompute: its blocks are freed (their prefix hashes
// stay cached until reused) and it goes back to the front of the queue.
func (e *Engine) preempt(s *Sequence) {
	e.pool.release(s.blocks)
	s.blocks = s.blocks[:0]
	s.computed, s.hashed, s.prefilled = 0, 0, false
	s.state = stateWaiting
	s.preemptions++
	e.counters.Preemptions++
	e.waiting.pushFront(s)
}

// scheduleWaiting admits queued requests in order until the budget, the
// batch size or the free blocks run out. As in vLLM's V0 block manager, a
// request is admitted only when blocks for its whole prompt fit with the
// watermark to spare, and gets them all at once; this damps the thrashing
// that admitting on the first chunk alone causes under KV pressure. A
// request that does not fit holds back those behind it (first come, first
// served).
func (e *Engine) scheduleWaiting(budget int, now time.Duration) {
	for budget > 0 && e.waiting.len() > 0 && len(e.running) < e.p.MaxNumSeqs {
		s := e.waiting.front()
		if s.arrival > now {
			return // arrived while the previous step ran; it joins the next
		}
		hits, fromFree := e.prefixHits(s)
		need := e.blocksFor(s.known()) - len(hits)
		if need+fromFree+e.watermark() > e.pool.numFree {
			return
		}
		computed := len(hits) * e.p.BlockSize
		n := min(s.known()-computed, budget)
		if e.p.DisableChunkedPrefill && n < s.known()-computed {
			return // without chunking a prompt is prefilled whole or waits
		}
		e.admit(s, hits, computed, now)
		s.blocks, _ = e.pool.allocate(need, s.blocks)
		e.waiting.popFront()
		e.sched = append(e.sched, scheduled{s, n})
		budget -= n
	}
}

// watermark is the number of blocks admission leaves free for the running
// sequences to grow into. An empty batch needs none: any request that
// passed Add fits the whole cache.
func (e *Engine) watermark() int {
	if len(e.running) == 0 {
		return 0
	}
	return int(e.p.KVWatermark * float64(e.pool.size()))
}

// admit moves s into the running batch holding the cached blocks hits.
func (e *Engine) admit(s *Sequence, hits []int32, computed int, now time.Duration) {
	for _, b := range hits {
		e.pool.share(b)
	}
	s.blocks = append(s.blocks[:0], hits...)
	s.computed, s.hashed = computed, len(hits)
	if !e.p.DisablePrefixCaching {
		e.counters.PrefixQueryTokens += int64(s.known())
		e.counters.PrefixHitTokens += int64(computed)
	}
	if !s.admitted {
		s.admitted, s.scheduled, s.cachedTokens = true, now, computed
	}
	s.state = stateRunning
	// Keep the batch in arrival order, as vLLM's first-come-first-served
	// policy does: the newest arrival is preempted first, and a preempted
	// request that returns is not first in line to be preempted again.
	i, _ := slices.BinarySearchFunc(e.running, s.id, func(r *Sequence, id uint64) int { return cmp.Compare(r.id, id) })
	e.running = slices.Insert(e.running, i, s)
}

// prefixHits returns the cached blocks that hold a prefix of s's prompt and
// how many of them sit in the free queue (taking them uses up free blocks).
// At least one token is always left to compute, since computing the last
// one is what samples the next token.
func (e *Engine) prefixHits(s *Sequence) ([]int32, int) {
	e.hitBuf = e.hitBuf[:0]
	if e.p.DisablePrefixCaching {
		return e.hitBuf, 0
	}
	limit := min(len(s.req.BlockHashes), (s.known()-1)/e.p.BlockSize)
	fromFree := 0
	for _, h := range s.req.BlockHashes[:limit] {
		b, ok := e.pool.lookup(h)
		if !ok {
			break
		}
		if e.pool.inFree[b] {
			fromFree++
		}
		e.hitBuf = append(e.hitBuf, b)
	}
	return e.hitBuf, fromFree
}

// price fills in the step's cost-model inputs and duration.
func (e *Engine) price(r *StepResult) {
	for _, sc := range e.sched {
		if sc.seq.prefilled {
			r.DecodeSeqs++
		} else {
			r.PrefillTokens += sc.n
			if sc.seq.preemptions > 0 {
				e.counters.RecomputedTokens += int64(sc.n)
			}
		}
		r.KVTokensRead += sc.seq.computed + sc.n
	}
	r.Duration = e.p.Cost.StepTime(r.PrefillTokens, r.DecodeSeqs, r.KVTokensRead, e.waiting.len())
	e.counters.Steps++
	e.counters.BusyTime += r.Duration
	e.counters.PrefillTokens += int64(r.PrefillTokens)
}

// commit applies the scheduled work: KV grows, full prompt blocks enter the
// prefix cache, and each sequence that computed its last known token
// samples the next one at the step's end.
func (e *Engine) commit(r *StepResult) {
	end := r.End()
	finished := false
	for _, sc := range e.sched {
		s := sc.seq
		s.computed += sc.n
		e.registerBlocks(s)
		if s.computed < s.known() {
			continue // a prefill chunk that did not reach the end
		}
		s.prefilled = true
		s.generated++
		ev := TokenEvent{Seq: s, First: s.generated == 1}
		if ev.First {
			s.firstToken = end
		} else {
			ev.Gap = end - s.lastToken
		}
		s.lastToken = end
		if s.generated >= s.req.OutputTokens {
			ev.Final, finished = true, true
			e.pool.release(s.blocks)
			s.blocks = s.blocks[:0]
			s.state = stateFinished
		}
		r.Tokens = append(r.Tokens, ev)
	}
	e.counters.GeneratedTokens += int64(len(r.Tokens))
	if finished {
		e.dropFinished()
	}
}

// registerBlocks publishes s's newly completed blocks to the cache, the
// output's too where BlockHashes covers them. The last token generated is
// never computed (nothing samples after it), so a reply's final block is
// cached only when a token beyond it was computed.
func (e *Engine) registerBlocks(s *Sequence) {
	if e.p.DisablePrefixCaching {
		return
	}
	full := min(s.computed/e.p.BlockSize, len(s.req.BlockHashes))
	for ; s.hashed < full; s.hashed++ {
		e.pool.register(s.blocks[s.hashed], s.req.BlockHashes[s.hashed])
	}
}

// dropFinished removes finished sequences from the running batch, keeping
// the order (the order decides who is preempted first).
func (e *Engine) dropFinished() {
	kept := e.running[:0]
	for _, s := range e.running {
		if s.state == stateRunning {
			kept = append(kept, s)
		}
	}
	clear(e.running[len(kept):])
	e.running = kept
}

func (e *Engine) blocksFor(tokens int) int {
	return (tokens + e.p.BlockSize - 1) / e.p.BlockSize
}

// seqQueue is a double-ended ring of sequences: FIFO for arrivals, with
// preempted sequences pushed back at the front.
type seqQueue struct {
	buf     []*Sequence
	head, n int
}

func (q *seqQueue) len() int { return q.n }

func (q *seqQueue) grow() {
	if q.n < len(q.buf) {
		return
	}
	buf := make([]*Sequence, max(16, 2*len(q.buf)))
	for i := range q.n {
		buf[i] = q.buf[(q.head+i)%len(q.buf)]
	}
	q.buf, q.head = buf, 0
}

func (q *seqQueue) pushBack(s *Sequence) {
	q.grow()
	q.buf[(q.head+q.n)%len(q.buf)] = s
	q.n++
}

func (q *seqQueue) pushFront(s *Sequence) {
	q.grow()
	q.head = (q.head - 1 + len(q.buf)) % len(q.buf)
	q.buf[q.head] = s
	q.n++
}

func (q *seqQueue) front() *Sequence { return q.buf[q.head] }

func (q *seqQueue) popFront() {
	q.buf[q.head] = nil
	q.head = (q.head + 1) % len(q.buf)
	q.n--
}

// remove deletes s wherever it is, shifting the later entries forward.
func (q *seqQueue) remove(s *Sequence) {
	for i := range q.n {
		if q.buf[(q.head+i)%len(q.buf)] != s {
			continue
		}
		for j := i; j < q.n-1; j++ {
			q.buf[(q.head+j)%len(q.buf)] = q.buf[(q.head+j+1)%len(q.buf)]
		}
		q.buf[(q.head+q.n-1)%len(q.buf)] = nil
		q.n--
		return
	}
}
