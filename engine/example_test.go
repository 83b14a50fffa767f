package engine_test

import (
	"context"
	"fmt"
	"time"

	"github.com/inferload/inferload/engine"
	"github.com/inferload/inferload/protocol"
	"github.com/inferload/inferload/record"
	"github.com/inferload/inferload/sim"
	"github.com/inferload/inferload/workload"
)

// A closed loop of 4 users sends 20 requests to a simulated server; the
// caller owns aggregation by ranging over the results.
func Example() {
	prof, _ := sim.LookupProfile("tiny")
	srv, url, err := sim.Start(sim.Config{Profile: prof}, "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	defer srv.Close()

	client, err := protocol.NewOpenAI(protocol.OpenAIOptions{BaseURL: url})
	if err != nil {
		panic(err)
	}
	defer client.Close()
	gen, err := workload.NewGenerator(workload.GeneratorConfig{Seed: 1, Input: workload.Fixed(32), Output: workload.Fixed(16), IgnoreEOS: true})
	if err != nil {
		panic(err)
	}
	render := func(s workload.Spec) (*protocol.Request, error) {
		body, err := protocol.OpenAIBody{Prompt: s.Prompt, MaxTokens: s.MaxTokens, Stream: true, IncludeUsage: true, IgnoreEOS: s.IgnoreEOS}.Render(protocol.APIChat)
		return &protocol.Request{API: protocol.APIChat, Body: body, Stream: true, MaxTokens: s.MaxTokens, EventsCap: s.MaxTokens}, err
	}
	eng, err := engine.New(engine.Config{Client: client, Source: gen, Render: render, Concurrency: 4, Requests: 20})
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
	prof, _ := sim.LookupProfile("tiny")
	srv, url, err := sim.Start(sim.Config{Profile: prof}, "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	defer srv.Close()
	client, err := protocol.NewOpenAI(protocol.OpenAIOptions{BaseURL: url})
	if err != nil {
		panic(err)
	}
	defer client.Close()
	gen, err := workload.NewGenerator(workload.GeneratorConfig{Seed: 1, Input: workload.Fixed(32), Output: workload.Fixed(8), IgnoreEOS: true})
	if err != nil {
		panic(err)
	}
	render := func(s workload.Spec) (*protocol.Request, error) {
		body, err := protocol.OpenAIBody{Prompt: s.Prompt, MaxTokens: s.MaxTokens, Stream: true, IgnoreEOS: s.IgnoreEOS}.Render(protocol.APIChat)
		return &protocol.Request{API: protocol.APIChat, Body: body, Stream: true, MaxTokens: s.MaxTokens}, err
	}
	eng, err := engine.New(engine.Config{Client: client, Source: gen, Render: render, Concurrency: 4, Duration: time.Hour})
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
