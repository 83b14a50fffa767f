package sim

import (
	"context"
	"errors"
	"io"
	"net/http"
	"sync/atomic"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/inferload/inferload/internal/tritonpb"
)

// grpcPath is the URL path prefix of Triton's gRPC service: each RPC is a
// POST to /inference.GRPCInferenceService/{method}.
var grpcPath = "/" + tritonpb.GRPCInferenceService_ServiceDesc.ServiceName + "/"

// tritonGRPC serves Triton's GRPCInferenceService (KServe v2 over gRPC)
// from the same engine, faults and metrics as the HTTP APIs: ModelInfer
// answers in one response, ModelStreamInfer streams one response per
// token as a decoupled LLM model does, then an empty response marked
// final.
type tritonGRPC struct {
	tritonpb.UnimplementedGRPCInferenceServiceServer
	s *Server
}

// newGRPCServer builds the gRPC server the HTTP server hands gRPC
// requests to (grpcHandler).
func (s *Server) newGRPCServer() *grpc.Server {
	// Close waits for the handlers, which end as soon as the server closes.
	g := grpc.NewServer(grpc.WaitForHandlers(true))
	tritonpb.RegisterGRPCInferenceServiceServer(g, &tritonGRPC{s: s})
	return g
}

// grpcHandler serves one gRPC call through the net/http server, so gRPC
// shares the simulator's one port with the HTTP APIs: a gRPC client
// without TLS speaks cleartext HTTP/2 with prior knowledge, which the
// server accepts (Start). The writer is wrapped so that the reset fault
// can abort the HTTP/2 stream.
func (s *Server) grpcHandler(w http.ResponseWriter, r *http.Request) {
	aw := &abortWriter{ResponseWriter: w}
	s.grpcSrv.ServeHTTP(aw, r.WithContext(context.WithValue(r.Context(), abortKey{}, aw)))
}

// abortWriter aborts the HTTP/2 stream (RST_STREAM) at the next write once
// abort is set. gRPC's handler transport writes from the net/http
// handler's goroutine, so the panic is the one net/http turns into a
// stream reset: what a crashed server or proxy looks like to a gRPC
// client, as a TCP reset is to an HTTP/1.1 one.
type abortWriter struct {
	http.ResponseWriter
	abort atomic.Bool
}

type abortKey struct{}

func (a *abortWriter) check() {
	if a.abort.Load() {
		panic(http.ErrAbortHandler)
	}
}

func (a *abortWriter) WriteHeader(code int) { a.check(); a.ResponseWriter.WriteHeader(code) }

func (a *abortWriter) Write(b []byte) (int, error) { a.check(); return a.ResponseWriter.Write(b) }

func (a *abortWriter) Flush() { a.check(); http.NewResponseController(a.ResponseWriter).Flush() }

// grpcCode is the gRPC status code a server means by an HTTP error status:
// the reverse of the mapping gRPC gateways use, so that an injected 503
// is Unavailable, a 429 ResourceExhausted and a 400 InvalidArgument.
func grpcCode(httpStatus int) codes.Code {
	switch httpStatus {
	case http.StatusBadRequest, http.StatusRequestEntityTooLarge, http.StatusUnprocessableEntity:
		return codes.InvalidArgument
	case http.StatusUnauthorized:
		return codes.Unauthenticated
	case http.StatusForbidden:
		return codes.PermissionDenied
	case http.StatusNotFound:
		return codes.NotFound
	case http.StatusConflict:
		return codes.AlreadyExists
	case http.StatusTooManyRequests:
		return codes.ResourceExhausted
	case http.StatusNotImplemented:
		return codes.Unimplemented
	case http.StatusBadGateway, http.StatusServiceUnavailable:
		return codes.Unavailable
	case http.StatusRequestTimeout, http.StatusGatewayTimeout:
		return codes.DeadlineExceeded
	}
	if httpStatus < 500 {
		return codes.FailedPrecondition
	}
	return codes.Internal
}

// grpcStatus is an HTTP API error as the gRPC API's status.
func grpcStatus(e *apiError) error { return status.Error(grpcCode(e.status), e.msg) }

func (g *tritonGRPC) ServerLive(context.Context, *tritonpb.ServerLiveRequest) (*tritonpb.ServerLiveResponse, error) {
	return &tritonpb.ServerLiveResponse{Live: true}, nil
}

func (g *tritonGRPC) ServerReady(context.Context, *tritonpb.ServerReadyRequest) (*tritonpb.ServerReadyResponse, error) {
	return &tritonpb.ServerReadyResponse{Ready: true}, nil
}

func (g *tritonGRPC) ModelReady(_ context.Context, r *tritonpb.ModelReadyRequest) (*tritonpb.ModelReadyResponse, error) {
	return &tritonpb.ModelReadyResponse{Ready: r.GetName() == g.s.prof.Model}, nil
}

func (g *tritonGRPC) ServerMetadata(context.Context, *tritonpb.ServerMetadataRequest) (*tritonpb.ServerMetadataResponse, error) {
	return &tritonpb.ServerMetadataResponse{Name: "triton", Version: Version,
		Extensions: []string{"classification", "sequence", "model_repository", "schedule_policy", "model_configuration",
			"system_shared_memory", "cuda_shared_memory", "binary_tensor_data", "parameters", "statistics", "trace", "logging"}}, nil
}

// ModelMetadata describes the model as GET /v2/models/{model} does
// (tritonInputs, tritonOutputs).
func (g *tritonGRPC) ModelMetadata(_ context.Context, r *tritonpb.ModelMetadataRequest) (*tritonpb.ModelMetadataResponse, error) {
	if r.GetName() != g.s.prof.Model {
		return nil, status.Error(codes.NotFound, unknownModel(r.GetName()))
	}
	return &tritonpb.ModelMetadataResponse{Name: g.s.prof.Model, Versions: []string{"1"}, Platform: "ensemble",
		Inputs: grpcTensors(tritonInputs), Outputs: grpcTensors(tritonOutputs)}, nil
}

// grpcTensors is a tensor list in ModelMetadata's form.
func grpcTensors(ts []tritonTensor) []*tritonpb.ModelMetadataResponse_TensorMetadata {
	out := make([]*tritonpb.ModelMetadataResponse_TensorMetadata, len(ts))
	for i, t := range ts {
		out[i] = &tritonpb.ModelMetadataResponse_TensorMetadata{Name: t.Name, Datatype: t.Datatype, Shape: t.Shape}
	}
	return out
}

// ModelInfer answers with the whole text in one response.
func (g *tritonGRPC) ModelInfer(ctx context.Context, req *tritonpb.ModelInferRequest) (*tritonpb.ModelInferResponse, error) {
	c, err := g.s.newRPC(ctx, req, false)
	if err != nil {
		return nil, err
	}
	if err := c.start(); err != nil {
		return nil, err
	}
	defer c.s.abort(c.st)
	return c.whole()
}

// ModelStreamInfer answers each request sent on the stream in turn: one
// response per token when its stream input is true (else one with the
// whole text), then an empty one marked final. The RPC ends when the
// client closes its side.
func (g *tritonGRPC) ModelStreamInfer(stream tritonpb.GRPCInferenceService_ModelStreamInferServer) error {
	for {
		req, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		c, err := g.s.newRPC(stream.Context(), req, true)
		if err != nil {
			return err
		}
		if err := c.serveStream(stream); err != nil {
			return err
		}
	}
}
