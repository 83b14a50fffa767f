package experiment

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/inferload/inferload/plan"
	"github.com/inferload/inferload/workload"
)

// recordingServer answers every chat request with one token and usage, and
// keeps their bodies (other paths, such as the telemetry probes, get a 404).
func recordingServer(t *testing.T) (*httptest.Server, func() []map[string]any) {
	t.Helper()
	var mu sync.Mutex
	var bodies []map[string]any
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/chat/completions" {
			http.NotFound(w, r)
			return
		}
		raw, _ := io.ReadAll(r.Body)
		var m map[string]any
		_ = json.Unmarshal(raw, &m)
		mu.Lock()
		bodies = append(bodies, m)
		mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"ok\"}}]}\n\n"+
			"data: {\"choices\":[],\"usage\":{\"prompt_tokens\":5,\"completion_tokens\":1}}\n\ndata: [DONE]\n\n")
	}))
	t.Cleanup(srv.Close)
	return srv, func() []map[string]any {
		mu.Lock()
		defer mu.Unlock()
		return append([]map[string]any(nil), bodies...)
	}
}

// A dataset supplies the prompts: whole conversations go out as messages,
// recorded reply lengths become max_tokens, and the profile is printed first.
func TestRunSendsDatasetPrompts(t *testing.T) {
	t.Parallel()
	data := strings.Join([]string{
		`{"messages":[{"role":"system","content":"be brief"},{"role":"user","content":"what is a knee"}],"max_tokens":7}`,
		`{"messages":[{"role":"user","content":"explain queueing"}],"max_tokens":9}`,
	}, "\n") + "\n"
	path := filepath.Join(t.TempDir(), "chat.jsonl")
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	srv, bodies := recordingServer(t)
	p := testPlan(t, fmt.Sprintf(`
target: {url: %s/v1}
load: {concurrency: 2, requests: 20}
workload: {dataset: {path: %s, format: openai-jsonl}, output_tokens: "3"}
`, srv.URL, path))
	var progress bytes.Buffer
	res, err := Run(context.Background(), p, Options{Progress: &progress})
	if err != nil {
		t.Fatal(err)
	}
	if res.Summary.Requests.Succeeded != 20 {
		t.Fatalf("requests %+v errors %v", res.Summary.Requests, res.Summary.Errors)
	}
	if !strings.Contains(progress.String(), "dataset: ") {
		t.Errorf("no dataset profile printed before the run: %q", progress.String())
	}
	seen := map[string]float64{}
	for _, b := range bodies() {
		msgs, _ := b["messages"].([]any)
		if len(msgs) == 1 && strings.HasPrefix(fmt.Sprint(msgs[0].(map[string]any)["content"]), "[inferload pre-flight") {
			continue // the pre-flight probe
		}
		// The run's salt opens the first message as a line of its own
		// (workload.salt); the entry's text follows it unchanged.
		first, _ := msgs[0].(map[string]any)
		salt, text, salted := strings.Cut(fmt.Sprint(first["content"]), "\n\n")
		if !salted || len(strings.Fields(salt)) != workload.SaltWords {
			t.Fatalf("first message %q does not open with the salt line", first["content"])
		}
		first["content"] = text
		last, _ := msgs[len(msgs)-1].(map[string]any)
		seen[fmt.Sprint(last["content"])] = b["max_tokens"].(float64)
		if last["content"] == "what is a knee" && (len(msgs) != 2 || first["content"] != "be brief") {
			t.Errorf("the system prompt of the first entry was not sent: %v", msgs)
		}
	}
	if seen["what is a knee"] != 7 || seen["explain queueing"] != 9 {
		t.Errorf("prompts and max_tokens sent: %v; want both entries with their recorded lengths", seen)
	}
}

// A dataset that cannot be read stops the run before any request, naming
// the plan field and the file.
func TestRunRejectsUnreadableDataset(t *testing.T) {
	t.Parallel()
	p := testPlan(t, `
target: {url: "http://127.0.0.1:1/v1"}
load: {concurrency: 1, requests: 1}
workload: {dataset: {path: /nonexistent/prompts.jsonl}}
`)
	_, err := Run(context.Background(), p, Options{})
	if err == nil || !strings.Contains(err.Error(), "workload.dataset") || !strings.Contains(err.Error(), "/nonexistent/prompts.jsonl") {
		t.Fatalf("err %v: want one naming workload.dataset and the file", err)
	}
}

// A run's files cache a dataset for that run only: a later run (a new
// cache) reads the file again, so a long-lived caller never gets the old
// contents, while the steps of one run share one read.
func TestWorkloadFilesPerRun(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "prompts.jsonl")
	write := func(n int) {
		var b strings.Builder
		for i := range n {
			fmt.Fprintf(&b, "{\"prompt\":\"question %d\"}\n", i)
		}
		if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	p := &plan.Plan{Workload: plan.Workload{Dataset: plan.Dataset{Path: path}}}
	count := func(files *workloadFiles) string {
		lines := datasetProfiles(p, files)
		if len(lines) != 1 {
			t.Fatalf("profiles %q, want one line", lines)
		}
		return lines[0]
	}
	write(2)
	run1 := newWorkloadFiles(context.Background())
	first := count(run1)
	write(3)
	tests := []struct {
		name  string
		files *workloadFiles
		same  bool
	}{
		// The same run keeps what it read: its steps send the same prompts.
		{"same run", run1, true},
		// A new run reads the changed file (the old process-wide cache
		// returned the two-prompt dataset here).
		{"next run", newWorkloadFiles(context.Background()), false},
		// No cache reads the file each time.
		{"no cache", nil, false},
	}
	for _, tt := range tests {
		if got := count(tt.files); (got == first) != tt.same {
			t.Errorf("%s: profile count %s after the file changed, first read %s; want same %v", tt.name, got, first, tt.same)
		}
	}
}
