package tritonpb

import (
	"net"
	"net/http"
	"net/url"
	"strings"

	"google.golang.org/grpc/metadata"
)

// DialTarget is the gRPC dial target of a Triton gRPC base URL
// (http://host:port, or https:// over TLS): its host and port (80 for
// http, 443 for https when it names none), dialled as written, without
// gRPC's name resolution. The client and the environment probe dial the
// same.
func DialTarget(base *url.URL) string {
	host := base.Host
	if base.Port() == "" {
		port := "80"
		if base.Scheme == "https" {
			port = "443"
		}
		host = net.JoinHostPort(base.Hostname(), port)
	}
	return "passthrough:///" + host
}

// Metadata is HTTP headers as a gRPC call's metadata: all of them but
// those HTTP/2 and gRPC set themselves (the authority among them).
func Metadata(headers http.Header) metadata.MD {
	md := metadata.MD{}
	for k, v := range headers {
		switch strings.ToLower(k) {
		case "host", "content-type", "accept", "connection", "te", "user-agent":
			continue
		}
		md.Set(k, v...)
	}
	return md
}
