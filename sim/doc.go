// Package sim is a simulated OpenAI-compatible LLM inference server: the
// default target of `inferload demo`, the test double of the load
// generator's own tests, and a model of a server for capacity planning.
//
// It behaves like a continuous-batching engine (vLLM is the model), not
// like a sleep: an Engine holds a waiting queue, a running batch of up to
// max_num_seqs sequences and a paged KV cache with prefix caching; each
// Step spends a token budget on decodes and chunked prefills, preempts
// by recompute when blocks run out, and takes the time a CostModel gives.
// The Engine reads no clock, so the same code runs under the real-time
// Server and under the virtual time of package capacity's planning.
//
// A Server puts OpenAI's /v1/chat/completions and /v1/completions (SSE
// streaming and plain JSON), /v1/models, the native APIs of TGI, Ollama,
// Triton (generate extension) and TorchServe at their servers' paths (one
// dialect each over the same engine), /health and a Prometheus /metrics
// (vLLM's names, or TGI's, Triton's or TorchServe's: Config.Metrics, and
// DCGM-exporter names) in front of one scheduler goroutine, and can
// inject Faults into a seeded fraction of requests, in each API's shapes.
//
// The package does not import the load generator: it speaks only HTTP.
// docs/sim.md describes the profiles, the cost model and its calibration.
package sim
