package protocol

import (
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/inferload/inferload/internal/tritonpb"
)

// One typical streamed object of each native API, as the servers send it.
const (
	tgiEvent = `data: {"index":12,"token":{"id":6975,"text":" learning","logprob":-0.0213,"special":false},` +
		`"generated_text":null,"details":null}` + "\n\n"
	ollamaLine = `{"model":"llama3.2","created_at":"2024-08-04T08:52:19.385406455-07:00",` +
		`"message":{"role":"assistant","content":" learning"},"done":false}` + "\n"
	tritonEvent = `data: {"model_name":"ensemble","model_version":"1","sequence_end":false,"sequence_id":0,` +
		`"sequence_start":false,"text_output":" learning"}` + "\n\n"
)

// BenchmarkTGIEventPath is TGI's whole per-token path: SSE parse, ScanTGI
// and the fold into the trace (timestamp kept), without the network. One
// op is one token event.
func BenchmarkTGIEventPath(b *testing.B) {
	benchTokenPath(b, sseEvents(tgiEvent), ScanTGI, func(e *TGIEvent) bool { return e.Token }, (*call).tgi)
}

// BenchmarkOllamaEventPath is Ollama's per-token path: the NDJSON line
// reader, ScanOllama and the fold into the trace.
func BenchmarkOllamaEventPath(b *testing.B) {
	r := NewLineReader(&repeatReader{pattern: []byte(ollamaLine), left: -1}, time.Now)
	next := func() ([]byte, time.Time, error) {
		line, err := r.Next()
		return line.Data, line.At, err
	}
	benchTokenPath(b, next, ScanOllama, func(l *OllamaLine) bool { return l.Content }, (*call).ollama)
}

// BenchmarkTritonEventPath is the generate extension's per-token path:
// SSE parse, ScanTriton and the fold into the trace.
func BenchmarkTritonEventPath(b *testing.B) {
	benchTokenPath(b, sseEvents(tritonEvent), ScanTriton, func(e *TritonEvent) bool { return e.Content }, (*call).triton)
}

// benchTokenPath runs one native API's per-token path b.N times: next
// reads an event from an endless stream, scan reads it (it must be a
// token), fold adds it to the trace.
func benchTokenPath[E any](b *testing.B, next func() ([]byte, time.Time, error), scan func([]byte, *E) error,
	token func(*E) bool, fold func(*call, *E, arrival) error) {
	cl := benchCall()
	var e E
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		data, at, err := next()
		if err != nil {
			b.Fatal(err)
		}
		if err := scan(data, &e); err != nil || !token(&e) {
			b.Fatal(err)
		}
		if err := fold(cl, &e, arrival{at: at}); err != nil {
			b.Fatal(err)
		}
		cl.rewind()
	}
}

// sseEvents is an endless SSE stream of event, read as benchTokenPath
// reads it.
func sseEvents(event string) func() ([]byte, time.Time, error) {
	r := NewSSEReader(&repeatReader{pattern: []byte(event), left: -1}, time.Now)
	return func() ([]byte, time.Time, error) {
		ev, err := r.Next()
		return ev.Data, ev.At, err
	}
}

// benchCall is a call whose trace folds token events as a real one does.
func benchCall() *call {
	return &call{req: &Request{}, t: &Trace{Sent: time.Now(), EventsUS: make([]int64, 0, 1024)}}
}

// rewind empties the trace's kept events (every 1000), so a long
// benchmark measures the fold, not the folding of a huge tail.
func (cl *call) rewind() {
	if len(cl.t.EventsUS) == 1000 {
		cl.t.EventsUS = cl.t.EventsUS[:0]
		cl.t.ContentEvents = 0
	}
}

// BenchmarkTritonGRPCResponse is the client's work per streamed token over
// gRPC past the transport: decoding one ModelStreamInferResponse into the
// reused message (protobuf allocates its fields afresh each time) and
// reading its text_output.
func BenchmarkTritonGRPCResponse(b *testing.B) {
	msg, err := proto.Marshal(&tritonpb.ModelStreamInferResponse{InferResponse: &tritonpb.ModelInferResponse{
		ModelName: "ensemble", ModelVersion: "1",
		Outputs:           []*tritonpb.ModelInferResponse_InferOutputTensor{{Name: "text_output", Datatype: "BYTES", Shape: []int64{1, 1}}},
		RawOutputContents: [][]byte{tritonpb.AppendBytes(nil, " token")},
	}})
	if err != nil {
		b.Fatal(err)
	}
	var m tritonpb.ModelStreamInferResponse
	b.ReportAllocs()
	b.SetBytes(int64(len(msg)))
	for b.Loop() {
		if err := (rawCodec{}).Unmarshal(msg, &m); err != nil {
			b.Fatal(err)
		}
		if ok, err := textOutput(m.GetInferResponse()); !ok || err != nil {
			b.Fatal(ok, err)
		}
	}
}
