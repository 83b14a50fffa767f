package sim

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sync/atomic"
	"time"

	collectorpb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	resourcepb "go.opentelemetry.io/proto/otlp/resource/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/proto"
)

// vLLM's llm_request span: its name and the attributes the simulator sets
// (vllm/tracing.py, SpanAttributes), durations in seconds.
const (
	spanName             = "llm_request"
	attrQueue            = "gen_ai.latency.time_in_queue"
	attrTTFT             = "gen_ai.latency.time_to_first_token"
	attrE2E              = "gen_ai.latency.e2e"
	attrPrefill          = "gen_ai.latency.time_in_model_prefill"
	attrDecode           = "gen_ai.latency.time_in_model_decode"
	attrInference        = "gen_ai.latency.time_in_model_inference"
	attrPromptTokens     = "gen_ai.usage.prompt_tokens"
	attrCompletionTokens = "gen_ai.usage.completion_tokens"
	attrRequestID        = "gen_ai.request.id"
	attrResponseModel    = "gen_ai.response.model"
)

// The exporter's bounds: spans queued before new ones are dropped, and
// the most sent in one export (an OpenTelemetry SDK's defaults: 2048 and
// 512).
const (
	spanQueueCap  = 2048
	spanBatchMax  = 512
	exportTimeout = 10 * time.Second
)

// DefaultOTLPExportEvery is how often the simulator exports its spans.
// vLLM's SDK waits 5 s; the simulator sends sooner so a load test's wait
// for the last spans is short.
const DefaultOTLPExportEvery = time.Second

// spanExporter sends finished requests' spans to an OTLP endpoint from
// its own goroutine: the scheduler only queues (never blocking: a full
// queue drops the span and counts it), batches go out every interval or
// when spanBatchMax are waiting.
type spanExporter struct {
	send    func(context.Context, *collectorpb.ExportTraceServiceRequest) error
	closeFn func()
	every   time.Duration
	queue   chan *tracepb.Span
	done    chan struct{}
	stopped chan struct{}
	model   string

	dropped, failed, sent atomic.Int64
}

// newSpanExporter parses endpoint: http:// or https:// sends OTLP/HTTP
// protobuf (to /v1/traces when the URL has no path, as vLLM's
// --otlp-traces-endpoint http://host:4318 means), grpc://host:port sends
// OTLP/gRPC without TLS.
func newSpanExporter(endpoint string, every time.Duration, model string) (*spanExporter, error) {
	u, err := url.Parse(endpoint)
	if err != nil || u.Host == "" {
		return nil, fmt.Errorf("otlp traces endpoint %q: want http://HOST:PORT[/v1/traces], https://… or grpc://HOST:PORT", endpoint)
	}
	e := &spanExporter{every: every, queue: make(chan *tracepb.Span, spanQueueCap), done: make(chan struct{}), stopped: make(chan struct{}), model: model, closeFn: func() {}}
	if e.every <= 0 {
		e.every = DefaultOTLPExportEvery
	}
	switch u.Scheme {
	case "http", "https":
		if u.Path == "" || u.Path == "/" {
			u.Path = "/v1/traces"
		}
		e.send = httpSender(u.String())
	case "grpc":
		conn, err := grpc.NewClient(u.Host, grpc.WithTransportCredentials(insecure.NewCredentials()))
		if err != nil {
			return nil, fmt.Errorf("otlp traces endpoint %q: %w", endpoint, err)
		}
		client := collectorpb.NewTraceServiceClient(conn)
		e.send = func(ctx context.Context, req *collectorpb.ExportTraceServiceRequest) error {
			_, err := client.Export(ctx, req)
			return err
		}
		e.closeFn = func() { _ = conn.Close() }
	default:
		return nil, fmt.Errorf("otlp traces endpoint %q: scheme %q is not http, https or grpc", endpoint, u.Scheme)
	}
	go e.loop()
	return e, nil
}

// httpSender posts an export as OTLP/HTTP protobuf.
func httpSender(target string) func(context.Context, *collectorpb.ExportTraceServiceRequest) error {
	client := &http.Client{}
	return func(ctx context.Context, req *collectorpb.ExportTraceServiceRequest) error {
		body, err := proto.Marshal(req)
		if err != nil {
			return err
		}
		hr, err := http.NewRequestWithContext(ctx, http.MethodPost, target, bytes.NewReader(body))
		if err != nil {
			return err
		}
		hr.Header.Set("Content-Type", "application/x-protobuf")
		resp, err := client.Do(hr)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("otlp export: HTTP %d", resp.StatusCode)
		}
		return nil
	}
}

// enqueue queues a span without blocking; a full queue drops it.
func (e *spanExporter) enqueue(sp *tracepb.Span) {
	select {
	case e.queue <- sp:
	default:
		e.dropped.Add(1)
	}
}

// loop batches and sends until close, then sends what is left.
func (e *spanExporter) loop() {
	defer close(e.stopped)
	tick := time.NewTicker(e.every)
	defer tick.Stop()
	var batch []*tracepb.Span
	for {
		select {
		case sp := <-e.queue:
			if batch = append(batch, sp); len(batch) >= spanBatchMax {
				batch = e.flush(batch)
			}
		case <-tick.C:
			batch = e.flush(batch)
		case <-e.done:
			for {
				select {
				case sp := <-e.queue:
					batch = append(batch, sp)
				default:
					e.flush(batch)
					return
				}
			}
		}
	}
}

// flush sends batch as one export; a failed export is counted and its
// spans dropped (as an SDK does), never retried forever.
func (e *spanExporter) flush(batch []*tracepb.Span) []*tracepb.Span {
	if len(batch) == 0 {
		return batch
	}
	req := &collectorpb.ExportTraceServiceRequest{ResourceSpans: []*tracepb.ResourceSpans{{
		Resource: &resourcepb.Resource{Attributes: []*commonpb.KeyValue{strAttr("service.name", "inferload-sim")}},
		ScopeSpans: []*tracepb.ScopeSpans{{
			Scope: &commonpb.InstrumentationScope{Name: "inferload.sim"},
			Spans: batch,
		}},
	}}}
	ctx, cancel := context.WithTimeout(context.Background(), exportTimeout)
	defer cancel()
	if err := e.send(ctx, req); err != nil {
		e.failed.Add(int64(len(batch)))
	} else {
		e.sent.Add(int64(len(batch)))
	}
	return batch[:0]
}

// close sends the spans still queued and stops.
func (e *spanExporter) close() {
	close(e.done)
	<-e.stopped
	e.closeFn()
}

// requestSpan is a finished request's llm_request span: it continues the
// request's traceparent (same trace id, the client's span as parent) when
// it sent a valid one, else starts a trace of its own; its attributes are
// the engine's exact times.
func requestSpan(st *stream, seqID uint64, start, end time.Time, model string) *tracepb.Span {
	t := st.times
	trace, parent, ok := parseTraceParent(st.traceParent)
	if !ok {
		sum := sha256.Sum256(binary.BigEndian.AppendUint64([]byte("sim-trace"), seqID))
		trace, parent = sum[:16], nil
	}
	sid := sha256.Sum256(binary.BigEndian.AppendUint64(append([]byte("sim-span"), trace...), seqID))
	return &tracepb.Span{
		TraceId: trace, SpanId: sid[:8], ParentSpanId: parent,
		Name: spanName, Kind: tracepb.Span_SPAN_KIND_SERVER,
		StartTimeUnixNano: uint64(start.UnixNano()), EndTimeUnixNano: uint64(end.UnixNano()),
		Attributes: []*commonpb.KeyValue{
			secAttr(attrQueue, t.queue), secAttr(attrTTFT, t.queue+t.prefill), secAttr(attrE2E, t.queue+t.prefill+t.decode),
			secAttr(attrPrefill, t.prefill), secAttr(attrDecode, t.decode), secAttr(attrInference, t.prefill+t.decode),
			intAttr(attrPromptTokens, int64(st.req.PromptTokens)), intAttr(attrCompletionTokens, int64(t.predictedN)),
			strAttr(attrRequestID, st.requestID), strAttr(attrResponseModel, model),
		},
	}
}

// parseTraceParent reads a W3C traceparent's trace and parent span ids
// (version 00: 00-<32 hex>-<16 hex>-<2 hex>); ok is false for anything
// else or an all-zero id.
func parseTraceParent(h string) (trace, span []byte, ok bool) {
	if len(h) != 55 || h[:3] != "00-" || h[35] != '-' || h[52] != '-' {
		return nil, nil, false
	}
	trace, err1 := hex.DecodeString(h[3:35])
	span, err2 := hex.DecodeString(h[36:52])
	if err1 != nil || err2 != nil || allZero(trace) || allZero(span) {
		return nil, nil, false
	}
	return trace, span, true
}

func allZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

func secAttr(k string, d time.Duration) *commonpb.KeyValue {
	return &commonpb.KeyValue{Key: k, Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_DoubleValue{DoubleValue: d.Seconds()}}}
}

func intAttr(k string, v int64) *commonpb.KeyValue {
	return &commonpb.KeyValue{Key: k, Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_IntValue{IntValue: v}}}
}

func strAttr(k, v string) *commonpb.KeyValue {
	return &commonpb.KeyValue{Key: k, Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_StringValue{StringValue: v}}}
}
