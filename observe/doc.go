// Package observe samples what the server, the GPUs and the load generator
// itself were doing, on the run's clock: Prometheus /metrics of the target
// (vLLM, SGLang, TGI, Triton, llama.cpp, DCGM exporter, node_exporter),
// local GPUs through NVML or nvidia-smi, and the client process. Each
// source yields at most one Sample per second of the run, keyed to the same
// second as the client's series windows, so a latency curve and the queue
// depth behind it line up. A source that fails leaves a marked gap; it
// never fails or stalls the run. docs/telemetry.md documents every series.
//
// It also receives the server's OpenTelemetry trace spans (OTLPReceiver:
// OTLP/gRPC and OTLP/HTTP on one port), maps vLLM's llm_request
// attributes to a request's queue, prefill and decode (SpanOf), and joins
// spans to records by trace id (SpanJoin); docs/server-time.md.
package observe
