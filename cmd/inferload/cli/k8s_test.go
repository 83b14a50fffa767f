package cli

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestK8sCommand: the manifests carry the plan's dataset, read from this
// machine, at its path in the pods; a loopback target is warned about on
// stderr (the manifests are still printed: the user may mean it);
// --guaranteed-cpu sets CPU limits, the default none.
func TestK8sCommand(t *testing.T) {
	t.Parallel()
	work := t.TempDir()
	dataset := filepath.Join(work, "prompts.jsonl")
	writeFile(t, dataset, "{\"prompt\":\"the dataset's own line\"}\n")
	planFile := filepath.Join(work, "plan.yaml")
	plan := "name: k\ntarget: {url: \"http://127.0.0.1:8000/v1\", model: m}\nload: {concurrency: 4, duration: 1m}\nworkload: {dataset: {path: " + dataset + "}}\n"
	writeFile(t, planFile, plan)
	code, stdout, stderr := runCLI(t, "k8s", "-f", planFile, "--shards", "2", "--image", "r/inferload:v1")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(stderr, "warning: target.url http://127.0.0.1:8000/v1: a loopback address") {
		t.Errorf("stderr %q: want the loopback warning", stderr)
	}
	for _, want := range []string{"the dataset's own line", "path: /plan/prompts.jsonl"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("manifests lack %q", want)
		}
	}
	if strings.Contains(stdout, dataset) {
		t.Error("the manifests name the dataset by its path on this machine")
	}
	_, plain, _ := runCLI(t, "k8s", "-f", planFile, "--shards", "2", "--image", "r/inferload:v1")
	_, guaranteed, _ := runCLI(t, "k8s", "-f", planFile, "--shards", "2", "--image", "r/inferload:v1", "--guaranteed-cpu")
	if strings.Count(plain, "cpu:") != 2 || strings.Count(guaranteed, "cpu:") != 3 {
		t.Errorf("cpu fields: %d by default (want 2 requests: load and collector), %d with --guaranteed-cpu (want 3: the load's limit too)",
			strings.Count(plain, "cpu:"), strings.Count(guaranteed, "cpu:"))
	}
}
