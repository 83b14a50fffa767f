package sim

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/inferload/inferload/internal/tritonpb"
)

// startGRPC runs the tiny simulator with faults and a gRPC client of its
// one port, returning the client, the model and the HTTP root.
func startGRPC(t *testing.T, cfg Config) (tritonpb.GRPCInferenceServiceClient, string, string) {
	t.Helper()
	srv, root := startTiny(t, cfg)
	conn, err := grpc.NewClient("passthrough:///"+strings.TrimPrefix(root, "http://"),
		grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	return tritonpb.NewGRPCInferenceServiceClient(conn), srv.Profile().Model, root
}

// llmRequest is the TensorRT-LLM ensemble's request, in raw form.
func llmRequest(model, prompt string, maxTokens int32, stream bool) *tritonpb.ModelInferRequest {
	in := func(name, dtype string) *tritonpb.ModelInferRequest_InferInputTensor {
		return &tritonpb.ModelInferRequest_InferInputTensor{Name: name, Datatype: dtype, Shape: []int64{1, 1}}
	}
	return &tritonpb.ModelInferRequest{ModelName: model, Id: "r1",
		Inputs:           []*tritonpb.ModelInferRequest_InferInputTensor{in("text_input", "BYTES"), in("max_tokens", "INT32"), in("stream", "BOOL")},
		RawInputContents: [][]byte{tritonpb.AppendBytes(nil, prompt), tritonpb.AppendInt32(nil, maxTokens), tritonpb.AppendBool(nil, stream)},
	}
}

// textOf is a response's text_output.
func textOf(t *testing.T, r *tritonpb.ModelInferResponse) string {
	t.Helper()
	var b strings.Builder
	if len(r.GetRawOutputContents()) == 0 {
		return ""
	}
	if err := tritonpb.EachBytes(r.GetRawOutputContents()[0], func(e []byte) { b.Write(e) }); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// ModelInfer answers with the whole text, the id echoed; ModelStreamInfer
// with one response a token, then an empty one marked final; the health
// and metadata RPCs answer as Triton's do. All on the HTTP APIs' port,
// whose metrics count the gRPC requests.
func TestTritonGRPCServes(t *testing.T) {
	t.Parallel()
	c, model, root := startGRPC(t, Config{Metrics: "triton"})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	r, err := c.ModelInfer(ctx, llmRequest(model, "hello there", 5, false))
	if err != nil {
		t.Fatal(err)
	}
	if r.GetId() != "r1" || r.GetOutputs()[0].GetName() != "text_output" || len(strings.Fields(textOf(t, r))) != 5 {
		t.Errorf("ModelInfer: id %q, outputs %v, text %q: want r1, text_output, 5 words", r.GetId(), r.GetOutputs(), textOf(t, r))
	}
	st, err := c.ModelStreamInfer(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Send(llmRequest(model, "hello there", 4, true)); err != nil {
		t.Fatal(err)
	}
	_ = st.CloseSend()
	tokens, finals := 0, 0
	for {
		m, err := st.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case tritonpb.FinalParam(m.GetInferResponse().GetParameters()):
			finals++
		case textOf(t, m.GetInferResponse()) != "":
			tokens++
		}
	}
	if tokens != 4 || finals != 1 {
		t.Errorf("stream: %d token responses, %d final: want 4 and 1", tokens, finals)
	}
	// The classifier: a batch of two texts in TEXT, a label a row in LABEL.
	cls := &tritonpb.ModelInferRequest{ModelName: model, Id: "c1",
		Inputs:           []*tritonpb.ModelInferRequest_InferInputTensor{{Name: "TEXT", Datatype: "BYTES", Shape: []int64{2, 1}}},
		Outputs:          []*tritonpb.ModelInferRequest_InferRequestedOutputTensor{{Name: "LABEL"}},
		RawInputContents: [][]byte{tritonpb.AppendBytes(tritonpb.AppendBytes(nil, "great"), "awful")},
	}
	r, err = c.ModelInfer(ctx, cls)
	if err != nil {
		t.Fatal(err)
	}
	labels := 0
	_ = tritonpb.EachBytes(r.GetRawOutputContents()[0], func(e []byte) {
		if slices.Contains(inferLabels[:], string(e)) {
			labels++
		}
	})
	if out := r.GetOutputs()[0]; out.GetName() != "LABEL" || !slices.Equal(out.GetShape(), []int64{2, 1}) || labels != 2 || r.GetId() != "c1" {
		t.Errorf("classifier: %v, %d labels: want LABEL [2 1] with 2 labels, id c1", r, labels)
	}
	cls.Outputs[0].Name = "SCORES"
	if _, err := c.ModelInfer(ctx, cls); status.Code(err) != codes.InvalidArgument || !strings.Contains(err.Error(), "unexpected inference output 'SCORES'") {
		t.Errorf("classifier, wrong output: %v", err)
	}
	md, err := c.ModelMetadata(ctx, &tritonpb.ModelMetadataRequest{Name: model})
	if err != nil || md.GetInputs()[0].GetName() != "text_input" || md.GetOutputs()[0].GetName() != "text_output" {
		t.Errorf("ModelMetadata: %v, %v", md, err)
	}
	if _, err := c.ModelMetadata(ctx, &tritonpb.ModelMetadataRequest{Name: "nope"}); status.Code(err) != codes.NotFound {
		t.Errorf("unknown model's metadata: %v, want NotFound", err)
	}
	if live, err := c.ServerLive(ctx, &tritonpb.ServerLiveRequest{}); err != nil || !live.GetLive() {
		t.Errorf("ServerLive: %v, %v", live, err)
	}
	resp, err := http.Get(root + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if want := fmt.Sprintf(`nv_inference_request_success{model=%q,version="1"} 3`, model); !strings.Contains(string(b), want) {
		t.Errorf("/metrics lacks %s", want)
	}
}

// Each fault, on both RPCs, as the gRPC client sees it: an HTTP status is
// its gRPC code, a reset the HTTP/2 stream's, an error event Triton's
// error_message.
func TestTritonGRPCFaults(t *testing.T) {
	t.Parallel()
	tests := []struct {
		faults string
		stream bool
		code   codes.Code
		msg    string // in the status, or the stream's error_message
	}{
		{"status503=1", false, codes.Unavailable, "HTTP 503"},
		{"status429=1", true, codes.ResourceExhausted, "HTTP 429"},
		{"status400=1", false, codes.InvalidArgument, "HTTP 400"},
		{"reset=1", false, codes.Internal, "RST_STREAM"},
		{"reset=1", true, codes.Internal, "RST_STREAM"},
		{"error_event=1", false, codes.Internal, faultMsg},
		{"error_event=1", true, codes.OK, faultMsg},
		{"malformed=1", true, codes.OK, ""},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s/stream=%v", tt.faults, tt.stream), func(t *testing.T) {
			t.Parallel()
			f, err := ParseFaults(tt.faults)
			if err != nil {
				t.Fatal(err)
			}
			c, model, _ := startGRPC(t, Config{Faults: f})
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			var got error
			msg := ""
			broken := false
			if !tt.stream {
				_, got = c.ModelInfer(ctx, llmRequest(model, "hi", 6, false))
			} else {
				st, err := c.ModelStreamInfer(ctx)
				if err != nil {
					t.Fatal(err)
				}
				_ = st.Send(llmRequest(model, "hi", 6, true))
				_ = st.CloseSend()
				for {
					m, err := st.Recv()
					if err != nil {
						if !errors.Is(err, io.EOF) {
							got = err
						}
						break
					}
					msg += m.GetErrorMessage()
					for _, raw := range m.GetInferResponse().GetRawOutputContents() {
						broken = broken || tritonpb.EachBytes(raw, func([]byte) {}) != nil
					}
				}
			}
			if s := status.Convert(got); s.Code() != tt.code || !strings.Contains(s.Message()+msg, tt.msg) {
				t.Errorf("status %v, error_message %q: want %v with %q", s, msg, tt.code, tt.msg)
			}
			if strings.HasPrefix(tt.faults, "malformed") && !broken {
				t.Error("malformed: no truncated text_output")
			}
		})
	}
}
