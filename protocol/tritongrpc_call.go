package protocol

import (
	"context"
	"errors"
	"io"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/inferload/inferload/internal/tritonpb"
	"github.com/inferload/inferload/record"
)

// runGRPC sends a triton-grpc request on the client's gRPC connection and
// reads its responses into the trace, with the call's timeouts and
// classification, as run does for HTTP.
func (cl *call) runGRPC() {
	conn, err := cl.c.grpc.client()
	if err != nil {
		cl.fail(&failure{record.ErrOther, err.Error()})
		return
	}
	cl.reserveEvents()
	ctx := metadata.NewOutgoingContext(context.WithValue(cl.ctx, callKey{}, cl), cl.c.grpc.md)
	if id := requestID(cl.req); id != "" {
		ctx = metadata.AppendToOutgoingContext(ctx, "traceparent", record.TraceParent(cl.req.TraceID, cl.req.Attempt),
			"x-request-id", id)
	}
	cl.t.BytesOut = int64(len(cl.req.Body))
	switch {
	case cl.c.tensors.Input != "":
		err = cl.grpcTensors(ctx, conn)
	case cl.req.Stream:
		err = cl.grpcStream(ctx, conn)
	default:
		err = cl.grpcUnary(ctx, conn)
	}
	if err != nil {
		if cl.ctx.Err() == nil {
			err = grpcFailure(err, cl.t.ContentEvents)
		}
		cl.fail(err)
	}
}

// grpcUnary calls ModelInfer: the response's arrival is the only content
// event, as for a whole HTTP reply.
func (cl *call) grpcUnary(ctx context.Context, conn *grpc.ClientConn) error {
	r, at, err := cl.modelInfer(ctx, conn)
	if err != nil {
		return err
	}
	if err := cl.tritonResponse(r, arrival{at: at}); err != nil {
		return err
	}
	return emptyOutput(cl.t)
}

// grpcTensors calls ModelInfer for a tensor model: like triton-infer's
// reply, the response's arrival is the first "token" and the end, with no
// content event (its output is a tensor, not generated tokens).
func (cl *call) grpcTensors(ctx context.Context, conn *grpc.ClientConn) error {
	r, at, err := cl.modelInfer(ctx, conn)
	if err != nil {
		return err
	}
	if err := tensorOutput(r, cl.c.tensors.Output); err != nil {
		return err
	}
	cl.t.FirstToken = at
	return nil
}

// modelInfer calls ModelInfer with the request's body and notes the reply
// and its arrival (the trace's end).
func (cl *call) modelInfer(ctx context.Context, conn *grpc.ClientConn) (*tritonpb.ModelInferResponse, time.Time, error) {
	var r tritonpb.ModelInferResponse
	err := conn.Invoke(ctx, tritonpb.GRPCInferenceService_ModelInfer_FullMethodName, rawBody(cl.req.Body), &r)
	at := time.Now()
	if err != nil {
		return nil, at, err
	}
	cl.replied()
	cl.t.End = at
	return &r, at, nil
}

// grpcStream calls ModelStreamInfer with the one request and reads its
// responses: each holding text is a content event, stamped when it was
// read; one marked triton_final_response ends the request, as does the
// server ending the stream (Triton sends no final mark unless asked, and
// the request asks).
func (cl *call) grpcStream(ctx context.Context, conn *grpc.ClientConn) error {
	st, err := conn.NewStream(ctx, &tritonpb.GRPCInferenceService_ServiceDesc.Streams[0],
		tritonpb.GRPCInferenceService_ModelStreamInfer_FullMethodName)
	if err != nil {
		return err
	}
	// io.EOF from SendMsg means the server already ended the stream: its
	// status comes from RecvMsg.
	if err := st.SendMsg(rawBody(cl.req.Body)); err != nil && !errors.Is(err, io.EOF) {
		return err
	}
	if err := st.CloseSend(); err != nil {
		return err
	}
	var m tritonpb.ModelStreamInferResponse
	for {
		err := st.RecvMsg(&m)
		at := time.Now()
		switch {
		case errors.Is(err, io.EOF):
			cl.t.End = at
			return emptyOutput(cl.t)
		case err != nil:
			return err
		}
		cl.replied()
		if msg := m.GetErrorMessage(); msg != "" {
			cl.t.End = at
			return &failure{record.ErrStreamErrorEvent, "error_message: " + msg}
		}
		if err := cl.tritonResponse(m.GetInferResponse(), arrival{at: at}); err != nil {
			return err
		}
		if tritonpb.FinalParam(m.GetInferResponse().GetParameters()) {
			cl.t.SawDone, cl.t.End = true, at
			cl.drainGRPC(st)
			return emptyOutput(cl.t)
		}
	}
}

// replied notes a message from the server: the call has a reply, HTTP 200
// as gRPC always answers (its bytes are sentStamper's count).
func (cl *call) replied() {
	cl.t.Status = 200
	cl.t.Proto = grpcProto
}

// tritonResponse folds one ModelInferResponse into the trace.
func (cl *call) tritonResponse(r *tritonpb.ModelInferResponse, a arrival) error {
	content, err := textOutput(r)
	if err != nil {
		cl.t.End = a.at
		return cl.malformed(err)
	}
	if content {
		return cl.token(a, false)
	}
	return nil
}

// drainGRPC waits, briefly, for the server to end the stream after the
// final response, so the call ends cleanly rather than by a cancel.
func (cl *call) drainGRPC(st grpc.ClientStream) {
	tm := time.AfterFunc(drainAfterDoneGrace, func() { cl.cancel(errDrainTimeout) })
	defer tm.Stop()
	var m tritonpb.ModelStreamInferResponse
	for st.RecvMsg(&m) == nil {
	}
}

// grpcFailure classifies a failed gRPC call as its HTTP counterpart would
// be (docs/apis.md): the status codes a server answers with map to the
// HTTP status a gateway gives them, so overload, rate limiting and
// rejected input count as 5xx, 429 and 4xx do; gRPC's own transport
// failures to the network kinds. events is the content events so far.
func grpcFailure(err error, events int) error {
	s, ok := status.FromError(err)
	if !ok {
		return err
	}
	return &failure{grpcKind(s.Code(), s.Message(), events), "gRPC " + s.Code().String() + ": " + s.Message()}
}

// grpcKind is the error kind of a gRPC status.
func grpcKind(code codes.Code, msg string, events int) record.ErrorKind {
	if kind, ok := grpcTransportKind(code, msg); ok {
		return kind
	}
	switch code {
	case codes.ResourceExhausted:
		return record.ErrHTTP429
	case codes.DeadlineExceeded:
		if events > 0 {
			return record.ErrTimeoutAfterTTFT
		}
		return record.ErrTimeoutBeforeTTFT
	case codes.InvalidArgument, codes.NotFound, codes.AlreadyExists, codes.PermissionDenied,
		codes.FailedPrecondition, codes.OutOfRange, codes.Unauthenticated, codes.Unimplemented:
		return record.ErrHTTP4xx
	case codes.Canceled:
		return record.ErrOther
	}
	// Unavailable, Internal, Unknown, Aborted, DataLoss: the server failed.
	return record.ErrHTTP5xx
}

// grpcTransportKind recognises the statuses gRPC's client gives its own
// failures, by their messages (gRPC keeps no error chain): a connection
// that could not be made or was lost, a stream the server reset, a reply
// that did not decode or was too large.
func grpcTransportKind(code codes.Code, msg string) (record.ErrorKind, bool) {
	has := func(subs ...string) bool {
		for _, s := range subs {
			if strings.Contains(msg, s) {
				return true
			}
		}
		return false
	}
	switch {
	case code == codes.Unavailable && has("Error while dialing", "connection error"):
		switch {
		case has("connection refused"):
			return record.ErrConnRefused, true
		case has("i/o timeout", "deadline exceeded"):
			return record.ErrConnectTimeout, true
		case has("tls:", "x509:", "authentication handshake failed"):
			return record.ErrTLS, true
		case has("no such host"):
			return record.ErrOther, true
		}
		return record.ErrConnReset, true
	case has("RST_STREAM", "error reading from server", "transport is closing", "connection reset", "closed before server preface"):
		return record.ErrConnReset, true
	case has("failed to unmarshal", "error unmarshalling", "received message larger than max"):
		return record.ErrMalformedEvent, true
	}
	return "", false
}
