package engine_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/inferload/inferload/engine"
	"github.com/inferload/inferload/protocol"
	"github.com/inferload/inferload/record"
	"github.com/inferload/inferload/sim"
	"github.com/inferload/inferload/workload"
)

// tinyChat is the examples' target and workload: the simulator's tiny
// profile on 127.0.0.1, an OpenAI client for it, and 32-token prompts
// each asking for output tokens, rendered as streamed chat with usage.
// The caller picks the Shape and the budget; stop closes the client and
// the server.
func tinyChat(output int) (cfg engine.Config, stop func()) {
	prof, _ := sim.LookupProfile("tiny")
	srv, url, err := sim.Start(sim.Config{Profile: prof}, "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	client, err := protocol.NewOpenAI(protocol.OpenAIOptions{BaseURL: url})
	if err != nil {
		srv.Close()
		panic(err)
	}
	stop = func() { client.Close(); srv.Close() }
	gen, err := workload.NewGenerator(workload.GeneratorConfig{Seed: 1, Input: workload.Fixed(32), Output: workload.Fixed(output), IgnoreEOS: true})
	if err != nil {
		stop()
		panic(err)
	}
	render := func(s workload.Spec) (*protocol.Request, error) {
		body, err := protocol.OpenAIBody{Prompt: s.Prompt, MaxTokens: s.MaxTokens, Stream: true, IncludeUsage: true, IgnoreEOS: s.IgnoreEOS}.Render(protocol.APIChat)
		return &protocol.Request{API: protocol.APIChat, Body: body, Stream: true, MaxTokens: s.MaxTokens, EventsCap: s.MaxTokens}, err
	}
	return engine.Config{Client: client, Source: gen, Render: render}, stop
}

// A closed loop of 4 users sends 20 requests to a simulated server; the
// caller owns aggregation by ranging over the results.
func Example() {
	cfg, stop := tinyChat(16)
	defer stop()
	cfg.Shape, cfg.Requests = engine.ClosedLoop{Users: 4}, 20
	eng, err := engine.New(cfg)
	if err != nil {
		panic(err)
	}

	results := make(chan *record.Result, 64)
	go func() { _ = eng.Run(context.Background(), results) }()
	agg := record.NewAggregate()
	for r := range results {
		agg.Add(r)
	}
	s := agg.Summary(record.RunInfo{Mode: record.ModeClosed})
	fmt.Printf("%d succeeded, %d failed, %d output tokens (%s)\n", s.Requests.Succeeded, s.Requests.Failed, s.Tokens.OutputTotal, s.Tokens.Source)
	// Output: 20 succeeded, 0 failed, 320 output tokens (usage)
}

// StopIssuing ends a phase early, gracefully: nothing new is sent once it
// returns, and the requests in flight finish. Here the phase is stopped
// after its tenth success; the users' requests still in flight then all
// succeed too, so every issued request answers.
func ExampleEngine_StopIssuing() {
	cfg, stop := tinyChat(8)
	defer stop()
	cfg.Shape, cfg.Duration = engine.ClosedLoop{Users: 4}, time.Hour
	eng, err := engine.New(cfg)
	if err != nil {
		panic(err)
	}

	results := make(chan *record.Result, 64)
	go func() { _ = eng.Run(context.Background(), results) }()
	succeeded := 0
	for r := range results {
		if r.OK() {
			succeeded++
		}
		if succeeded == 10 {
			eng.StopIssuing()
		}
	}
	fmt.Println(succeeded >= 10, succeeded == eng.Issued())
	// Output: true true
}

// bursts is a load shape of its own: Size requests due together every
// Every, an open loop whose schedule it writes. A new shape is one such
// type, in one file: Validate for New, and a Run that sends through one
// of the engine's loops.
type bursts struct {
	Size  int
	Every time.Duration
}

func (b bursts) Validate() error {
	if b.Size < 1 || b.Every <= 0 {
		return fmt.Errorf("bursts: size %d every %s: want at least 1 request and a positive period", b.Size, b.Every)
	}
	return nil
}

func (b bursts) Run(ph *engine.Phase) {
	engine.OpenLoop{Arrivals: &burstArrivals{b: b}}.Run(ph)
}

// burstArrivals yields the k-th request's offset: its burst's start.
type burstArrivals struct {
	b  bursts
	mu sync.Mutex
	k  int
}

func (a *burstArrivals) Next() time.Duration {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.k++
	return time.Duration((a.k-1)/a.b.Size) * a.b.Every
}

// A phase of a shape written outside the engine: three bursts of two
// requests, 20 ms apart. Each record keeps when its burst was due.
func ExampleShape() {
	cfg, stop := tinyChat(4)
	defer stop()
	cfg.Shape, cfg.Requests = bursts{Size: 2, Every: 20 * time.Millisecond}, 6
	eng, err := engine.New(cfg)
	if err != nil {
		panic(err)
	}

	results := make(chan *record.Result, 64)
	go func() { _ = eng.Run(context.Background(), results) }()
	var dueMS []int64
	for r := range results {
		dueMS = append(dueMS, r.IntendedUS/1000)
	}
	slices.Sort(dueMS)
	fmt.Println("due (ms):", dueMS)
	// Output: due (ms): [0 0 20 20 40 40]
}

// A graph class: each task plans, fans out to three researchers whose
// prompts carry the plan's real reply, then answers with all three
// replies in its prompt. Each task is one record listing its calls.
func ExampleGraph() {
	cfg, stop := tinyChat(8)
	defer stop()
	agent := &engine.Graph{Nodes: []engine.Node{
		{Name: "plan", Render: cfg.Render},
		{Name: "research", After: []int{0}, Count: 3, Render: cfg.Render},
		{Name: "answer", After: []int{1}, Render: cfg.Render},
	}}
	cfg.Shape, cfg.Requests = engine.ClosedLoop{Users: 2}, 4
	cfg.Graphs = map[string]*engine.Graph{record.DefaultClass: agent}
	eng, err := engine.New(cfg)
	if err != nil {
		panic(err)
	}
	results := make(chan *record.Result, 4)
	go func() { _ = eng.Run(context.Background(), results) }()
	for r := range results {
		var calls []string
		for _, c := range r.Chain {
			calls = append(calls, c.Name)
		}
		fmt.Println(r.OK(), calls, r.Chain[4].InputTokens > r.Chain[1].InputTokens, r.Chain[1].InputTokens > r.Chain[0].InputTokens)
	}
	// Output:
	// true [plan research#1 research#2 research#3 answer] true true
	// true [plan research#1 research#2 research#3 answer] true true
	// true [plan research#1 research#2 research#3 answer] true true
	// true [plan research#1 research#2 research#3 answer] true true
}
