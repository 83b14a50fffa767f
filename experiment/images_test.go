package experiment

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// imageParts returns the image_url parts of a recorded chat body's last
// message.
func imageParts(t *testing.T, body map[string]any) []string {
	t.Helper()
	msgs, _ := body["messages"].([]any)
	last, _ := msgs[len(msgs)-1].(map[string]any)
	parts, ok := last["content"].([]any)
	if !ok {
		return nil
	}
	var urls []string
	for _, p := range parts {
		pm, _ := p.(map[string]any)
		if pm["type"] == "image_url" {
			iu, _ := pm["image_url"].(map[string]any)
			urls = append(urls, fmt.Sprint(iu["url"]))
		}
	}
	return urls
}

// A dataset's image_url parts reach the server as content parts, beside
// the text, instead of being dropped.
func TestRunSendsDatasetImages(t *testing.T) {
	t.Parallel()
	line := `{"messages":[{"role":"user","content":[{"type":"text","text":"what is this"},{"type":"image_url","image_url":{"url":"https://example.com/a.png"}}]}],"max_tokens":4}`
	path := filepath.Join(t.TempDir(), "vision.jsonl")
	if err := os.WriteFile(path, []byte(line+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	srv, bodies := recordingServer(t)
	p := testPlan(t, fmt.Sprintf(`
target: {url: %s/v1}
load: {concurrency: 1, requests: 3}
workload: {dataset: {path: %s}}
`, srv.URL, path))
	if _, err := Run(context.Background(), p, Options{}); err != nil {
		t.Fatal(err)
	}
	sent := 0
	for _, b := range bodies() {
		if mt, _ := b["max_tokens"].(float64); mt == 1 {
			continue // the probe's prompt is its own, conversation and images left out
		}
		sent++
		if got := imageParts(t, b); len(got) != 1 || got[0] != "https://example.com/a.png" {
			t.Errorf("image parts sent %v, want the dataset's one", got)
		}
	}
	if sent != 3 {
		t.Errorf("%d measured requests seen, want 3", sent)
	}
}

// Synthetic images of a class are sent as data URIs of the asked format.
func TestRunSendsSyntheticImages(t *testing.T) {
	t.Parallel()
	srv, bodies := recordingServer(t)
	p := testPlan(t, fmt.Sprintf(`
target: {url: %s/v1}
load: {concurrency: 1, requests: 4}
workload:
  classes:
    - {name: vision, weight: 1, input_tokens: "8", output_tokens: "2", images: {count: 2, size: 32x24, format: png}}
`, srv.URL))
	if _, err := Run(context.Background(), p, Options{}); err != nil {
		t.Fatal(err)
	}
	got := bodies()
	if len(got) < 4 { // the run's 4, and any preflight probe
		t.Fatalf("%d requests, want at least 4", len(got))
	}
	for _, b := range got {
		urls := imageParts(t, b)
		if len(urls) != 2 || !strings.HasPrefix(urls[0], "data:image/png;base64,") {
			t.Errorf("image parts %d (%.30v), want 2 PNG data URIs", len(urls), urls)
		}
	}
}

// An API that cannot send images refuses a dataset that has them, naming
// the file and line, before any request.
func TestRunRefusesImagesForTextAPIs(t *testing.T) {
	t.Parallel()
	data := `{"messages":[{"role":"user","content":"plain"}]}` + "\n" +
		`{"messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"https://example.com/a.png"}}]}]}` + "\n"
	path := filepath.Join(t.TempDir(), "vision.jsonl")
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	p := testPlan(t, fmt.Sprintf(`
target: {url: "http://127.0.0.1:1/v1", api: completions}
load: {concurrency: 1, requests: 1}
workload: {dataset: {path: %s}}
`, path))
	_, err := Run(context.Background(), p, Options{})
	if err == nil || !strings.Contains(err.Error(), path+" line 2") || !strings.Contains(err.Error(), "completions API cannot send") {
		t.Fatalf("err = %v, want one naming %s line 2 and the completions API", err, path)
	}
}
