package distributed

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/inferload/inferload/plan"
)

// fakeFiles serves ReadFile from a map; any other path does not exist.
func fakeFiles(files map[string][]byte) func(string) ([]byte, error) {
	return func(p string) ([]byte, error) {
		if b, ok := files[p]; ok {
			return b, nil
		}
		return nil, fmt.Errorf("open %s: %w", p, os.ErrNotExist)
	}
}

// filesPlan names a dataset twice (the default class's and a class's), a
// second one under another directory with the same base name, a
// tokenizer.json and a CA bundle.
const filesPlan = `name: files
target: {url: "https://vllm.serving:8443/v1", model: qwen, api_key_env: OPENAI_API_KEY, ca_file: certs/ca.pem}
load: {concurrency: 6, duration: 1m}
workload:
  tokenizer: tok/tokenizer.json
  classes:
    - {name: chat, weight: 1, dataset: {path: data/chat.jsonl}}
    - {name: doc, weight: 1, dataset: {path: other/chat.jsonl}}
    - {name: again, weight: 1, dataset: {path: data/chat.jsonl}}
`

// TestK8sPlanFiles: every file the plan names is in the ConfigMap, byte
// for byte (text as data, the rest as binaryData), under a valid key, and
// the plan in the ConfigMap names it at the path the load pods see it
// (the ConfigMap's mount); one file named twice is one key, two files
// with one base name are two.
func TestK8sPlanFiles(t *testing.T) {
	t.Parallel()
	files := map[string][]byte{
		"certs/ca.pem":       []byte("-----BEGIN CERTIFICATE-----\n"),
		"tok/tokenizer.json": []byte(`{"model":{}}`),
		"data/chat.jsonl":    []byte("{\"prompt\":\"hi\"}\n"),
		"other/chat.jsonl":   {0xff, 0xfe, 'x', '\n'}, // not UTF-8: binaryData
	}
	p, err := plan.Parse("plan.yaml", []byte(filesPlan))
	if err != nil {
		t.Fatal(err)
	}
	out, err := K8sManifests(p, K8sOptions{Segments: 2, Image: "i", ReadFile: fakeFiles(files)})
	if err != nil {
		t.Fatal(err)
	}
	m := decodeManifests(t, out)
	pod := m.load.Spec.Template.Spec
	mount := ""
	for _, vm := range pod.Containers[0].VolumeMounts {
		i := slices.IndexFunc(pod.Volumes, func(v corev1.Volume) bool { return v.Name == vm.Name })
		if i >= 0 && pod.Volumes[i].ConfigMap != nil && pod.Volumes[i].ConfigMap.Name == m.cm.Name {
			mount = vm.MountPath
		}
	}
	if mount == "" {
		t.Fatal("the load pods do not mount the plan's ConfigMap")
	}
	shipped, err := plan.Parse("plan.yaml", []byte(m.cm.Data["plan.yaml"]))
	if err != nil {
		t.Fatal(err)
	}
	original := p.Files()
	got := shipped.Files()
	if len(got) != len(original) {
		t.Fatalf("the shipped plan names %d files, the plan %d", len(got), len(original))
	}
	keys := map[string]bool{}
	for i, ref := range got {
		key, ok := strings.CutPrefix(*ref.Path, mount+"/")
		if !ok || strings.Contains(key, "/") {
			t.Errorf("%s is %s in the pod, not a file of the ConfigMap mounted at %s", ref.Field, *ref.Path, mount)
			continue
		}
		if errs := validation.IsConfigMapKey(key); len(errs) > 0 {
			t.Errorf("%s: key %q: %v", ref.Field, key, errs)
		}
		body := []byte(m.cm.Data[key])
		if b, ok := m.cm.BinaryData[key]; ok {
			body = b
		}
		if want := files[*original[i].Path]; !bytes.Equal(body, want) {
			t.Errorf("%s: the ConfigMap's %q holds %q, want %s's %q", ref.Field, key, body, *original[i].Path, want)
		}
		keys[key] = true
	}
	// Four files, data/chat.jsonl named twice.
	if len(keys) != 4 || len(m.cm.Data)+len(m.cm.BinaryData) != 5 {
		t.Errorf("keys %v, data %d, binary %d: want 4 files and plan.yaml", keys, len(m.cm.Data), len(m.cm.BinaryData))
	}
	if p.Workload.Classes[0].Dataset.Path != "data/chat.jsonl" {
		t.Error("generating the manifests rewrote the caller's plan")
	}
}

// TestK8sFilesTooLarge: a file, or files together, past a ConfigMap's
// 1 MiB are refused with the way around (a claim); under --files-claim a
// file named by its path there is not read and stays where it is, on a
// read-only volume.
func TestK8sFilesTooLarge(t *testing.T) {
	t.Parallel()
	const one = `name: big
target: {url: "http://vllm.serving:8000/v1", model: qwen}
load: {concurrency: 4, duration: 1m}
workload: {dataset: {path: DATA}}
`
	const two = `name: big
target: {url: "https://vllm.serving:8443/v1", model: qwen, ca_file: ca.pem}
load: {concurrency: 4, duration: 1m}
workload: {dataset: {path: d.jsonl}}
`
	half := bytes.Repeat([]byte("x"), 600<<10)
	tests := []struct {
		name, plan string
		files      map[string][]byte
		want       string
	}{
		// One byte past the limit.
		{"one file", strings.Replace(one, "DATA", "d.jsonl", 1), map[string][]byte{"d.jsonl": bytes.Repeat([]byte("x"), maxConfigMap+1)},
			"workload.dataset.path d.jsonl is larger than the 1 MiB a ConfigMap holds"},
		// Each fits, not both.
		{"together", two, map[string][]byte{"d.jsonl": half, "ca.pem": half}, "come to 1.2 MiB, over the 1 MiB"},
	}
	for _, tt := range tests {
		p, err := plan.Parse("plan.yaml", []byte(tt.plan))
		if err != nil {
			t.Fatal(err)
		}
		_, err = K8sManifests(p, K8sOptions{Segments: 2, Image: "i", ReadFile: fakeFiles(tt.files)})
		if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), "--files-claim") {
			t.Errorf("%s: %v; want %q and the --files-claim way around", tt.name, err, tt.want)
		}
	}

	p, err := plan.Parse("plan.yaml", []byte(strings.Replace(one, "DATA", "/data/sharegpt.json", 1)))
	if err != nil {
		t.Fatal(err)
	}
	unread := func(p string) ([]byte, error) { return nil, errors.New("read " + p) }
	out, err := K8sManifests(p, K8sOptions{Segments: 2, Image: "i", FilesClaim: "datasets", ReadFile: unread})
	if err != nil {
		t.Fatal(err)
	}
	m := decodeManifests(t, out)
	back, err := plan.Parse("plan.yaml", []byte(m.cm.Data["plan.yaml"]))
	if err != nil || back.Workload.Dataset.Path != "/data/sharegpt.json" {
		t.Errorf("the shipped dataset path: %+v, %v; want /data/sharegpt.json as given", back.Workload.Dataset, err)
	}
	pod := m.load.Spec.Template.Spec
	claimed := slices.ContainsFunc(pod.Volumes, func(v corev1.Volume) bool {
		return v.PersistentVolumeClaim != nil && v.PersistentVolumeClaim.ClaimName == "datasets" && v.PersistentVolumeClaim.ReadOnly
	})
	mounted := slices.ContainsFunc(pod.Containers[0].VolumeMounts, func(vm corev1.VolumeMount) bool {
		return vm.MountPath == "/data" && vm.ReadOnly
	})
	if !claimed || !mounted {
		t.Errorf("volumes %+v, mounts %+v: want the claim datasets read-only at /data", pod.Volumes, pod.Containers[0].VolumeMounts)
	}
}

// TestK8sGuaranteedCPU: --guaranteed-cpu gives whole cores with every
// request equal to its limit (Guaranteed QoS), and says so in the
// manifest.
func TestK8sGuaranteedCPU(t *testing.T) {
	t.Parallel()
	p, err := plan.Parse("plan.yaml", []byte(k8sPlan))
	if err != nil {
		t.Fatal(err)
	}
	out, err := K8sManifests(p, K8sOptions{Segments: 8, Image: "i", GuaranteedCPU: true})
	if err != nil {
		t.Fatal(err)
	}
	res := decodeManifests(t, out).load.Spec.Template.Spec.Containers[0].Resources
	// 250 streams a pod: half a core, rounded up to one; 160Mi.
	if res.Requests.Cpu().MilliValue() != 1000 || res.Requests.Memory().Value() != 160<<20 {
		t.Errorf("requests %v: want 1 CPU and 160Mi", res.Requests)
	}
	for name, q := range res.Requests {
		if l, ok := res.Limits[name]; !ok || !l.Equal(q) {
			t.Errorf("%s: request %v, limit %v: want them equal (Guaranteed QoS)", name, q.String(), l.String())
		}
	}
	if len(res.Limits) != len(res.Requests) || !bytes.Contains(out, []byte("Guaranteed QoS")) {
		t.Errorf("limits %v for requests %v, or no comment saying why", res.Limits, res.Requests)
	}
}
