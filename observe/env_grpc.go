package observe

import (
	"context"
	"crypto/tls"
	"fmt"
	"net/http"
	"net/url"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/inferload/inferload/internal/tritonpb"
)

// probeTritonGRPC describes a Triton server spoken to over gRPC (base is
// http://host:port, or https:// over TLS with client's TLS settings) by
// its ServerMetadata and ModelMetadata RPCs, the gRPC twins of GET /v2
// and /v2/models/{model}.
func probeTritonGRPC(ctx context.Context, client *http.Client, base, model string, headers http.Header) Served {
	u, err := url.Parse(base)
	if err != nil {
		return Served{Error: err.Error()}
	}
	creds := insecure.NewCredentials()
	if u.Scheme == "https" {
		creds = credentials.NewTLS(clientTLS(client))
	}
	conn, err := grpc.NewClient(tritonpb.DialTarget(u), grpc.WithTransportCredentials(creds), grpc.WithNoProxy())
	if err != nil {
		return Served{Error: err.Error()}
	}
	defer conn.Close()
	ctx = metadata.NewOutgoingContext(ctx, tritonpb.Metadata(headers))
	c := tritonpb.NewGRPCInferenceServiceClient(conn)
	var sv Served
	if sm, err := c.ServerMetadata(ctx, &tritonpb.ServerMetadataRequest{}); err != nil {
		sv.Error = grpcProbeError("ServerMetadata", err)
	} else {
		sv.Version = sm.GetVersion()
	}
	mm, err := c.ModelMetadata(ctx, &tritonpb.ModelMetadataRequest{Name: model})
	switch {
	case err != nil && sv.Error == "":
		sv.Error = grpcProbeError("ModelMetadata", err)
	case err == nil && mm.GetName() != "":
		sv.Models = []ServedModel{{ID: mm.GetName(), OwnedBy: mm.GetPlatform()}}
	}
	return sv
}

// clientTLS is the TLS configuration of client's transport (a copy), or
// the default one.
func clientTLS(client *http.Client) *tls.Config {
	if tr, ok := client.Transport.(*http.Transport); ok && tr.TLSClientConfig != nil {
		return tr.TLSClientConfig.Clone()
	}
	return &tls.Config{}
}

// grpcProbeError describes a failed probe RPC by its status.
func grpcProbeError(rpc string, err error) string {
	s := status.Convert(err)
	return fmt.Sprintf("gRPC %s: %s: %s", rpc, s.Code(), s.Message())
}
