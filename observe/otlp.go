package observe

import (
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	collectorpb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/inferload/inferload/record"
)

// DefaultOTLPMaxBytes bounds one export request, compressed or not: the
// OTLP/gRPC default message limit (4 MiB). A server's batch of 512 spans
// (the OpenTelemetry SDK's default) is far below it.
const DefaultOTLPMaxBytes = 4 << 20

// OTLPConfig configures an OTLP trace receiver.
type OTLPConfig struct {
	// Addr is the address to listen on, e.g. "127.0.0.1:4317" or ":4317".
	Addr string
	// OnSpan gets every span of every accepted export, in arrival order,
	// one call at a time (the receiver serialises them).
	OnSpan func(record.Span)
	// MaxBytes bounds one export request; 0 means DefaultOTLPMaxBytes.
	MaxBytes int
	// Listener, when set, is used instead of listening on Addr (a test
	// hands over a port it already holds).
	Listener net.Listener
}

// OTLPStats is what an OTLP receiver has seen.
type OTLPStats struct {
	// Exports counts the accepted export requests, Spans the spans in them.
	Exports, Spans int64
	// Rejected counts export requests refused (malformed, too large, of a
	// type not accepted); FirstError says why the first one was.
	Rejected   int64
	FirstError string
}

// OTLPReceiver accepts OpenTelemetry trace exports on one port, in both
// OTLP transports: OTLP/gRPC (TraceService/Export, over cleartext
// HTTP/2) and OTLP/HTTP with a protobuf body (POST /v1/traces, HTTP/1.1
// or cleartext HTTP/2, gzip or not). A server started with
// --otlp-traces-endpoint http://HOST:PORT reaches it either way. Bad
// payloads get an error status (gRPC InvalidArgument or
// ResourceExhausted, HTTP 400/413/415) and are counted; they never stop
// the receiver.
type OTLPReceiver struct {
	cfg  OTLPConfig
	ln   net.Listener
	srv  *http.Server
	grpc *grpc.Server
	done chan struct{}

	mu    sync.Mutex // serialises OnSpan and guards stats
	stats OTLPStats
}

// ListenOTLP starts an OTLP trace receiver on cfg.Addr.
func ListenOTLP(cfg OTLPConfig) (*OTLPReceiver, error) {
	if cfg.MaxBytes <= 0 {
		cfg.MaxBytes = DefaultOTLPMaxBytes
	}
	ln := cfg.Listener
	if ln == nil {
		var err error
		if ln, err = net.Listen("tcp", cfg.Addr); err != nil {
			return nil, fmt.Errorf("observe.otlp_listen %s: %w", cfg.Addr, err)
		}
	}
	r := &OTLPReceiver{cfg: cfg, ln: ln, done: make(chan struct{})}
	r.grpc = grpc.NewServer(grpc.MaxRecvMsgSize(cfg.MaxBytes))
	collectorpb.RegisterTraceServiceServer(r.grpc, traceService{r: r})
	mux := http.NewServeMux()
	mux.HandleFunc("/v1/traces", r.serveHTTP)
	var protocols http.Protocols
	protocols.SetHTTP1(true)
	protocols.SetUnencryptedHTTP2(true)
	r.srv = &http.Server{
		Handler:           r.route(mux),
		Protocols:         &protocols,
		ReadHeaderTimeout: 10 * time.Second,
	}
	go func() {
		defer close(r.done)
		_ = r.srv.Serve(ln)
	}()
	return r, nil
}

// route sends gRPC calls (HTTP/2 with a gRPC content type) to the gRPC
// server and everything else to mux.
func (r *OTLPReceiver) route(mux http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.ProtoMajor == 2 && strings.HasPrefix(req.Header.Get("Content-Type"), "application/grpc") {
			r.grpc.ServeHTTP(w, req)
			return
		}
		mux.ServeHTTP(w, req)
	})
}

// Addr is the address the receiver listens on (with the port picked
// when Addr asked for port 0).
func (r *OTLPReceiver) Addr() string { return r.ln.Addr().String() }

// Stats returns what the receiver has seen so far.
func (r *OTLPReceiver) Stats() OTLPStats {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.stats
}

// Close stops accepting and waits up to a second for exports in progress
// to finish; OnSpan is not called after it returns.
func (r *OTLPReceiver) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	err := r.srv.Shutdown(ctx)
	if err != nil {
		err = r.srv.Close()
	}
	<-r.done
	r.mu.Lock() // an export still inside OnSpan finishes first
	r.cfg.OnSpan = nil
	r.mu.Unlock()
	return err
}

// accept hands the spans of one decoded export to OnSpan.
func (r *OTLPReceiver) accept(req *collectorpb.ExportTraceServiceRequest) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.stats.Exports++
	for _, rs := range req.GetResourceSpans() {
		for _, ss := range rs.GetScopeSpans() {
			for _, sp := range ss.GetSpans() {
				r.stats.Spans++
				if r.cfg.OnSpan != nil {
					r.cfg.OnSpan(SpanOf(sp))
				}
			}
		}
	}
}

// reject counts a refused export.
func (r *OTLPReceiver) reject(err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.stats.Rejected++
	if r.stats.FirstError == "" {
		r.stats.FirstError = err.Error()
	}
}

// traceService is the OTLP/gRPC TraceService.
type traceService struct {
	collectorpb.UnimplementedTraceServiceServer
	r *OTLPReceiver
}

// Export accepts one gRPC export; gRPC itself refuses a message over
// MaxBytes (ResourceExhausted) or one that does not decode.
func (s traceService) Export(_ context.Context, req *collectorpb.ExportTraceServiceRequest) (*collectorpb.ExportTraceServiceResponse, error) {
	s.r.accept(req)
	return &collectorpb.ExportTraceServiceResponse{}, nil
}

// errHTTP is an OTLP/HTTP refusal with its status code.
type errHTTP struct {
	code int
	msg  string
}

func (e *errHTTP) Error() string { return e.msg }

// serveHTTP is POST /v1/traces: a protobuf ExportTraceServiceRequest,
// gzip-compressed or not. The reply is a protobuf
// ExportTraceServiceResponse, or on failure a google.rpc.Status saying why
// (the OTLP/HTTP specification's error body).
func (r *OTLPReceiver) serveHTTP(w http.ResponseWriter, req *http.Request) {
	body, err := r.readExport(w, req)
	if err == nil {
		var msg collectorpb.ExportTraceServiceRequest
		if uerr := proto.Unmarshal(body, &msg); uerr != nil {
			err = &errHTTP{http.StatusBadRequest, fmt.Sprintf("otlp: the body is not an ExportTraceServiceRequest: %v", uerr)}
		} else {
			r.accept(&msg)
			writeProto(w, http.StatusOK, &collectorpb.ExportTraceServiceResponse{})
			return
		}
	}
	var he *errHTTP
	if !errors.As(err, &he) {
		he = &errHTTP{http.StatusBadRequest, err.Error()}
	}
	r.reject(he)
	if he.code == http.StatusMethodNotAllowed {
		w.Header().Set("Allow", http.MethodPost)
	}
	writeProto(w, he.code, status.New(httpCode(he.code), he.msg).Proto())
}

// readExport checks an OTLP/HTTP request's method, type and encoding and
// reads its body, at most MaxBytes both before and after decompression.
func (r *OTLPReceiver) readExport(w http.ResponseWriter, req *http.Request) ([]byte, error) {
	if req.Method != http.MethodPost {
		return nil, &errHTTP{http.StatusMethodNotAllowed, "otlp: /v1/traces takes POST, not " + req.Method}
	}
	ct, _, _ := mime.ParseMediaType(req.Header.Get("Content-Type"))
	if ct != "application/x-protobuf" && ct != "application/protobuf" {
		return nil, &errHTTP{http.StatusUnsupportedMediaType, fmt.Sprintf("otlp: content type %q is not accepted: send http/protobuf (application/x-protobuf); OTLP/JSON is not read", ct)}
	}
	var in io.Reader = http.MaxBytesReader(w, req.Body, int64(r.cfg.MaxBytes))
	switch enc := strings.ToLower(req.Header.Get("Content-Encoding")); enc {
	case "", "identity":
	case "gzip":
		zr, err := gzip.NewReader(in)
		if err != nil {
			return nil, &errHTTP{http.StatusBadRequest, fmt.Sprintf("otlp: gzip body: %v", err)}
		}
		in = zr
	default:
		return nil, &errHTTP{http.StatusUnsupportedMediaType, fmt.Sprintf("otlp: content encoding %q is not accepted (gzip or none)", enc)}
	}
	body, err := io.ReadAll(io.LimitReader(in, int64(r.cfg.MaxBytes)+1))
	var tooBig *http.MaxBytesError
	switch {
	case errors.As(err, &tooBig) || len(body) > r.cfg.MaxBytes:
		return nil, &errHTTP{http.StatusRequestEntityTooLarge, fmt.Sprintf("otlp: export over %d bytes", r.cfg.MaxBytes)}
	case err != nil:
		return nil, &errHTTP{http.StatusBadRequest, fmt.Sprintf("otlp: reading the body: %v", err)}
	}
	return body, nil
}

// httpCode is the gRPC code of an OTLP/HTTP refusal, for its Status body.
func httpCode(code int) codes.Code {
	switch code {
	case http.StatusRequestEntityTooLarge:
		return codes.ResourceExhausted
	case http.StatusMethodNotAllowed, http.StatusUnsupportedMediaType:
		return codes.Unimplemented
	}
	return codes.InvalidArgument
}

// writeProto writes m as an OTLP/HTTP protobuf reply.
func writeProto(w http.ResponseWriter, code int, m proto.Message) {
	b, err := proto.Marshal(m)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/x-protobuf")
	w.WriteHeader(code)
	_, _ = w.Write(b)
}
