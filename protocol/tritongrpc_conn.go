package protocol

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/stats"
	"google.golang.org/protobuf/proto"

	"github.com/inferload/inferload/internal/tritonpb"
)

// grpcConn is a client's one gRPC connection (a grpc.ClientConn, which
// multiplexes every triton-grpc request over one HTTP/2 connection as
// HTTP/2 mode does), made on the first triton-grpc request so that
// clients that never send one start no gRPC machinery.
type grpcConn struct {
	target  string
	dialOpt []grpc.DialOption
	md      metadata.MD // headers and the API key, sent with every call
	badURL  error       // the base URL cannot name a gRPC server

	mu   sync.Mutex
	conn *grpc.ClientConn // nil until the first call, and after close
	// dialed is set by each new TCP connection and taken by the next call
	// to get its headers out (Trace.NewConn).
	dialed atomic.Bool
}

// newGRPCConn prepares the gRPC connection to base: cleartext for http,
// TLS (tlsConf) for https. Nothing is dialled yet.
func newGRPCConn(base *url.URL, opts OpenAIOptions, tlsConf *tls.Config) *grpcConn {
	// One client serves every API of a plan's classes, so a base URL with a
	// path fails only this API's requests (with CheckAPIURL's message).
	g := &grpcConn{md: grpcMetadata(opts), badURL: CheckAPIURL(APITritonGRPC, base.String()), target: tritonpb.DialTarget(base)}
	creds := insecure.NewCredentials()
	if base.Scheme == "https" {
		creds = credentials.NewTLS(tlsConf)
	}
	connect := opts.ConnectTimeout
	if connect == 0 {
		connect = DefaultConnectTimeout
	}
	d := &net.Dialer{Timeout: connect, KeepAlive: 30 * time.Second}
	g.dialOpt = []grpc.DialOption{
		grpc.WithTransportCredentials(creds),
		// No proxy from the environment, as for HTTP (transport).
		grpc.WithNoProxy(),
		grpc.WithContextDialer(func(ctx context.Context, addr string) (net.Conn, error) {
			conn, err := d.DialContext(ctx, "tcp", addr)
			if err == nil {
				g.dialed.Store(true)
			}
			return conn, err
		}),
		// A target that comes back is found within a second or so, not
		// after gRPC's default backoff of up to two minutes.
		grpc.WithConnectParams(grpc.ConnectParams{MinConnectTimeout: connect,
			Backoff: backoff.Config{BaseDelay: 100 * time.Millisecond, Multiplier: 1.6, Jitter: 0.2, MaxDelay: 2 * time.Second}}),
		grpc.WithStatsHandler(sentStamper{}),
		grpc.WithDefaultCallOptions(grpc.ForceCodec(rawCodec{})),
	}
	if h, ok := opts.Headers["Host"]; ok {
		g.dialOpt = append(g.dialOpt, grpc.WithAuthority(h))
	}
	return g
}

// grpcMetadata is what every call of a client sends: its headers and the
// API key as a bearer token.
func grpcMetadata(opts OpenAIOptions) metadata.MD {
	h := make(http.Header, len(opts.Headers))
	for k, v := range opts.Headers {
		h[k] = []string{v}
	}
	md := tritonpb.Metadata(h)
	if opts.APIKey != "" {
		md.Set("authorization", "Bearer "+opts.APIKey)
	}
	return md
}

// client is the connection, made on first use.
func (g *grpcConn) client() (*grpc.ClientConn, error) {
	if g.badURL != nil {
		return nil, g.badURL
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.conn == nil {
		conn, err := grpc.NewClient(g.target, g.dialOpt...)
		if err != nil {
			return nil, fmt.Errorf("gRPC client: %w", err)
		}
		g.conn = conn
	}
	return g.conn, nil
}

// close closes the connection, failing the calls in flight on it; the
// next call makes a new one, as an HTTP request after Close opens a new
// connection.
func (g *grpcConn) close() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.conn != nil {
		_ = g.conn.Close()
		g.conn = nil
	}
}

// rawBody is a request body marshalled before it was due (Request.Body).
type rawBody []byte

// rawCodec sends a rawBody as it is and reads replies as protobuf: the
// "proto" codec, so calls carry Content-Type application/grpc+proto.
type rawCodec struct{}

func (rawCodec) Marshal(v any) ([]byte, error) {
	if b, ok := v.(rawBody); ok {
		return b, nil
	}
	m, ok := v.(proto.Message)
	if !ok {
		return nil, fmt.Errorf("cannot marshal %T", v)
	}
	return proto.Marshal(m)
}

func (rawCodec) Unmarshal(data []byte, v any) error {
	m, ok := v.(proto.Message)
	if !ok {
		return fmt.Errorf("cannot unmarshal into %T", v)
	}
	return proto.Unmarshal(data, m)
}

func (rawCodec) Name() string { return "proto" }

// callKey carries a request's call in its RPC's context, for sentStamper.
type callKey struct{}

// sentStamper stamps Trace.Sent when a call's headers go out: gRPC has a
// connection in hand then, so, as with HTTP, neither dialing nor waiting
// for the connection counts as the server's time. It also counts each
// reply message's bytes as gRPC decoded them, so no message is sized a
// second time. It runs on the caller's goroutine, inside Invoke,
// NewStream and RecvMsg.
type sentStamper struct{}

func (sentStamper) TagRPC(ctx context.Context, _ *stats.RPCTagInfo) context.Context { return ctx }

func (sentStamper) HandleRPC(ctx context.Context, s stats.RPCStats) {
	switch s := s.(type) {
	case *stats.OutHeader:
		if cl, ok := ctx.Value(callKey{}).(*call); ok {
			cl.t.Sent = time.Now()
			cl.t.NewConn = cl.c.grpc.dialed.Swap(false)
			cl.gotConn()
		}
	case *stats.InPayload:
		if cl, ok := ctx.Value(callKey{}).(*call); ok {
			cl.t.BytesIn += int64(s.Length)
		}
	}
}

func (sentStamper) TagConn(ctx context.Context, _ *stats.ConnTagInfo) context.Context { return ctx }

func (sentStamper) HandleConn(context.Context, stats.ConnStats) {}

// grpcProto is Trace.Proto of a gRPC call: HTTP/2, as net/http names it.
const grpcProto = "HTTP/2.0"
