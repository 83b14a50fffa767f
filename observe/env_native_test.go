package observe

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/inferload/inferload/internal/enginetest"
	"github.com/inferload/inferload/sim"
)

// Each native API's environment probe reads what the server says of
// itself from that server's own endpoints (here the simulator's, which
// serves them at the real paths).
func TestProbeNative(t *testing.T) {
	t.Parallel()
	srv, v1 := enginetest.StartSim(t, sim.Config{Seed: 1})
	root, model := strings.TrimSuffix(v1, "/v1"), srv.Profile().Model
	tests := []struct {
		api  string
		want Served
	}{
		{"tgi", Served{Version: sim.Version, Models: []ServedModel{{ID: model, MaxContext: srv.Profile().MaxModelLen}}}},
		{"ollama", Served{Version: sim.Version, Models: []ServedModel{{ID: model}}}},
		{"triton", Served{Version: sim.Version, Models: []ServedModel{{ID: model, OwnedBy: "ensemble"}}}},
		{"triton-grpc", Served{Version: sim.Version, Models: []ServedModel{{ID: model, OwnedBy: "ensemble"}}}},
		{"torchserve", Served{Error: "TorchServe lists its models on the management API (port 8081 by default), which is not probed"}},
	}
	for _, tt := range tests {
		got := ProbeNative(context.Background(), http.DefaultClient, root, tt.api, model, http.Header{})
		got.Headers = nil
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tt.api, diff)
		}
	}
	// A server that is not there is an error, never a failure of the run.
	for _, api := range []string{"tgi", "triton-grpc"} {
		if got := ProbeNative(context.Background(), http.DefaultClient, "http://127.0.0.1:1", api, model, http.Header{}); got.Error == "" {
			t.Errorf("%s probe of a closed port: %+v, want an error", api, got)
		}
	}
	// A model the gRPC server does not serve is its NotFound.
	if got := ProbeNative(context.Background(), http.DefaultClient, root, "triton-grpc", "bert", http.Header{}); !strings.Contains(got.Error, "ModelMetadata: NotFound") {
		t.Errorf("unknown model: %+v", got)
	}
}
