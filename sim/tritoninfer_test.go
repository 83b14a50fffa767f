package sim

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// The classification model's /infer: a good request gets a label a text
// (its id echoed), a mismatched tensor Triton's 400 {"error"}.
func TestTritonInferShapes(t *testing.T) {
	t.Parallel()
	srv, root := startTiny(t, Config{})
	model := srv.Profile().Model
	path := "/v2/models/" + model + "/infer"
	checkRoutes(t, root, []routeCase{
		// One text: one label, the id echoed.
		{"one", path, `{"id":"r1","inputs":[{"name":"TEXT","shape":[1,1],"datatype":"BYTES","data":["great film"]}]}`, 200,
			[]string{`{"id":"r1","model_name":`, `"outputs":[{"name":"LABEL","datatype":"BYTES","shape":[1,1],"data":["`}},
		// A batch of three, data nested by row: three labels.
		{"batch", path, `{"inputs":[{"name":"TEXT","shape":[3,1],"datatype":"BYTES","data":[["a"],["b"],["c"]]}],"outputs":[{"name":"LABEL"}]}`, 200,
			[]string{`"shape":[3,1],"data":["`}},
		// A wrong input name.
		{"input", path, `{"inputs":[{"name":"PROMPT","shape":[1,1],"datatype":"BYTES","data":["a"]}]}`, 400,
			[]string{`{"error":"unexpected inference input 'PROMPT' for model`}},
		// A wrong output name.
		{"output", path, `{"inputs":[{"name":"TEXT","shape":[1,1],"datatype":"BYTES","data":["a"]}],"outputs":[{"name":"P"}]}`, 400,
			[]string{`{"error":"unexpected inference output 'P' for model`}},
		// A wrong datatype.
		{"datatype", path, `{"inputs":[{"name":"TEXT","shape":[1,1],"datatype":"INT32","data":[1]}]}`, 400,
			[]string{`expects 'BYTES'`}},
		// No texts.
		{"empty", path, `{"inputs":[{"name":"TEXT","shape":[0,1],"datatype":"BYTES","data":[]}]}`, 400,
			[]string{`want a non-empty array of strings`}},
		// Not JSON.
		{"json", path, `{"inputs":`, 400, []string{`failed to parse the request JSON`}},
		// An unknown model.
		{"model", "/v2/models/nope/infer", `{}`, 400, []string{`{"error":"Request for unknown model: 'nope' is not found"}`}},
	})
}

// The classifier's compute grows with the input's length and with the
// batch: the engine's prefill over every token, in simulated time (the
// server's own truth, so no wall-clock noise).
func TestTritonInferCostGrows(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	prefill := map[string]time.Duration{}
	done := make(chan struct{}, 8)
	cfg := Config{OnFinish: func(id string, tr Truth) {
		mu.Lock()
		prefill[id] = tr.Prefill
		mu.Unlock()
		done <- struct{}{}
	}}
	srv, root := startTiny(t, cfg)
	url := root + "/v2/models/" + srv.Profile().Model + "/infer"
	short := `"` + strings.Repeat("word ", 16) + `"`
	long := `"` + strings.Repeat("word ", 256) + `"`
	for _, c := range []struct{ id, data string }{
		{"short", short}, {"long", long}, {"batch8", strings.Repeat(short+",", 7) + short},
	} {
		req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(
			fmt.Sprintf(`{"inputs":[{"name":"TEXT","shape":[1,1],"datatype":"BYTES","data":[%s]}]}`, c.data)))
		req.Header.Set("X-Request-Id", c.id)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("%s: HTTP %d", c.id, resp.StatusCode)
		}
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: never finished", c.id)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if !(prefill["short"] < prefill["long"] && prefill["short"] < prefill["batch8"]) {
		t.Errorf("prefill short %v, long %v, batch of 8 %v: want the short one cheapest", prefill["short"], prefill["long"], prefill["batch8"])
	}
}

// With Triton's metric names, /infer requests are counted as Triton
// counts them: nv_inference_request_success and the cumulative durations.
func TestTritonInferMetrics(t *testing.T) {
	t.Parallel()
	srv, root := startTiny(t, Config{Metrics: "triton"})
	body := `{"inputs":[{"name":"TEXT","shape":[1,1],"datatype":"BYTES","data":["fine"]}]}`
	for range 2 {
		resp, err := http.Post(root+"/v2/models/"+srv.Profile().Model+"/infer", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	resp, err := http.Get(root + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	want := fmt.Sprintf(`nv_inference_request_success{model=%q,version="1"} 2`, srv.Profile().Model)
	if !strings.Contains(string(b), want) {
		t.Errorf("/metrics lacks %s:\n%s", want, b)
	}
}

// TestTritonModelMetadata: GET /v2/models/{m} lists the tensors the
// simulated model answers on both endpoints, the generate ensemble's and
// the classifier's, so a client that checks its tensor names finds them.
func TestTritonModelMetadata(t *testing.T) {
	t.Parallel()
	srv, root := startTiny(t, Config{})
	resp, err := http.Get(root + "/v2/models/" + srv.Profile().Model)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var meta struct {
		Name            string
		Inputs, Outputs []struct{ Name, Datatype string }
	}
	if err := json.NewDecoder(resp.Body).Decode(&meta); err != nil || meta.Name != srv.Profile().Model {
		t.Fatalf("metadata %+v: %v", meta, err)
	}
	names := func(ts []struct{ Name, Datatype string }) (out []string) {
		for _, x := range ts {
			out = append(out, x.Name)
		}
		return out
	}
	for _, want := range []string{"text_input", "max_tokens", "stream", inferInput} {
		if !slices.Contains(names(meta.Inputs), want) {
			t.Errorf("inputs %v lack %s", names(meta.Inputs), want)
		}
	}
	for _, want := range []string{"text_output", inferOutput} {
		if !slices.Contains(names(meta.Outputs), want) {
			t.Errorf("outputs %v lack %s", names(meta.Outputs), want)
		}
	}
}
