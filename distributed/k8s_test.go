package distributed

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/inferload/inferload/plan"
)

// manifests are the decoded objects of K8sManifests' output, each decoded
// strictly into its Kubernetes API type (an unknown field is an error).
type manifests struct {
	sa        corev1.ServiceAccount
	cm        corev1.ConfigMap
	pvc       corev1.PersistentVolumeClaim
	svc       corev1.Service
	collector batchv1.Job
	load      batchv1.Job
}

func decodeManifests(t *testing.T, out []byte) manifests {
	t.Helper()
	var m manifests
	var kinds []string
	for _, doc := range bytes.Split(out, []byte("\n---\n")) {
		var head struct{ Kind string }
		if err := yaml.Unmarshal(doc, &head); err != nil {
			t.Fatal(err)
		}
		kinds = append(kinds, head.Kind)
		var target any
		switch head.Kind {
		case "ServiceAccount":
			target = &m.sa
		case "ConfigMap":
			target = &m.cm
		case "PersistentVolumeClaim":
			target = &m.pvc
		case "Service":
			target = &m.svc
		case "Job":
			if bytes.Contains(doc, []byte("completionMode: Indexed")) {
				target = &m.load
			} else {
				target = &m.collector
			}
		default:
			t.Fatalf("unexpected kind %q", head.Kind)
		}
		if err := yaml.UnmarshalStrict(doc, target); err != nil {
			t.Fatalf("%s does not decode strictly: %v\n%s", head.Kind, err, doc)
		}
	}
	want := []string{"ServiceAccount", "ConfigMap", "PersistentVolumeClaim", "Service", "Job", "Job"}
	if !slices.Equal(kinds, want) {
		t.Fatalf("kinds %v, want %v", kinds, want)
	}
	return m
}

const k8sPlan = `name: launch
target: {url: "http://vllm.serving:8000/v1", model: qwen, api_key_env: OPENAI_API_KEY}
load: {concurrency: 2000, duration: 10m, warmup: 1m}
workload: {input_tokens: "512", output_tokens: "256"}
`

// TestK8sManifests: the manifests decode strictly into the Kubernetes API
// types and keep their promises: an Indexed Job of N pods each running
// segment $(JOB_COMPLETION_INDEX)/N against the collector's Service; the
// key only from a Secret; no permissions; not root; pods spread over
// nodes and sized from their share of the users.
func TestK8sManifests(t *testing.T) {
	t.Parallel()
	p, err := plan.Parse("plan.yaml", []byte(k8sPlan))
	if err != nil {
		t.Fatal(err)
	}
	tol, err := ParseToleration("gpu=true:NoSchedule")
	if err != nil {
		t.Fatal(err)
	}
	out, err := K8sManifests(p, K8sOptions{Segments: 8, Image: "registry.local/inferload:v1", Namespace: "bench",
		NodeSelector: map[string]string{"pool": "load"}, Tolerations: []Toleration{tol}})
	if err != nil {
		t.Fatal(err)
	}
	m := decodeManifests(t, out)
	job := m.load
	spec := job.Spec
	if spec.CompletionMode == nil || *spec.CompletionMode != batchv1.IndexedCompletion || *spec.Completions != 8 || *spec.Parallelism != 8 {
		t.Errorf("load job: completion mode %v, completions %v, parallelism %v; want Indexed, 8, 8", spec.CompletionMode, spec.Completions, spec.Parallelism)
	}
	pod := spec.Template.Spec
	c := pod.Containers[0]
	args := strings.Join(c.Args, " ")
	for _, want := range []string{"--segment $(JOB_COMPLETION_INDEX)/8", "--collector http://inferload-collector:8089", "-f /plan/plan.yaml"} {
		if !strings.Contains(args, want) {
			t.Errorf("load args %q lack %q", args, want)
		}
	}
	envs := map[string]corev1.EnvVar{}
	for _, e := range c.Env {
		envs[e.Name] = e
	}
	if e := envs["JOB_COMPLETION_INDEX"]; e.ValueFrom == nil || e.ValueFrom.FieldRef == nil {
		t.Error("JOB_COMPLETION_INDEX is not taken from the pod's completion index")
	}
	if e := envs["OPENAI_API_KEY"]; e.ValueFrom == nil || e.ValueFrom.SecretKeyRef == nil || e.ValueFrom.SecretKeyRef.Name != "inferload-api-key" {
		t.Errorf("the API key %+v does not come from the Secret", e)
	}
	collectorEnv := m.collector.Spec.Template.Spec.Containers[0].Env
	for _, env := range [][]corev1.EnvVar{c.Env, collectorEnv} {
		i := slices.IndexFunc(env, func(e corev1.EnvVar) bool { return e.Name == TokenEnv })
		if i < 0 || env[i].ValueFrom == nil || env[i].ValueFrom.SecretKeyRef == nil || env[i].ValueFrom.SecretKeyRef.Name != "inferload-collector-token" || env[i].ValueFrom.SecretKeyRef.Key != "token" {
			t.Errorf("$%s does not come from the inferload-collector-token Secret in %+v", TokenEnv, env)
		}
	}
	for _, obj := range []string{m.cm.Data["plan.yaml"], args} {
		if strings.Contains(obj, "sk-") {
			t.Error("a key-looking value reached the ConfigMap or the arguments")
		}
	}
	if m.sa.AutomountServiceAccountToken == nil || *m.sa.AutomountServiceAccountToken || pod.ServiceAccountName != "inferload" {
		t.Error("the load pods' service account mounts a token or is not the generated one")
	}
	sc := c.SecurityContext
	if sc == nil || sc.RunAsNonRoot == nil || !*sc.RunAsNonRoot || sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation {
		t.Errorf("load container security context %+v: want non-root, no privilege escalation", sc)
	}
	if len(pod.TopologySpreadConstraints) == 0 || pod.Affinity == nil || pod.Affinity.PodAntiAffinity == nil {
		t.Error("load pods are not spread over nodes")
	}
	if pod.NodeSelector["pool"] != "load" || len(pod.Tolerations) != 1 || pod.Tolerations[0].Key != "gpu" {
		t.Errorf("node selector %v, tolerations %+v", pod.NodeSelector, pod.Tolerations)
	}
	// 2000 users over 8 pods: 250 streams, half a core and 64 + 16 MiB;
	// no CPU limit (a CFS quota throttles the client), memory limited.
	req, lim := c.Resources.Requests, c.Resources.Limits
	if _, cpuLimit := lim[corev1.ResourceCPU]; req.Cpu().MilliValue() != 500 || req.Memory().Value() != 80<<20 || cpuLimit || lim.Memory().Value() != 160<<20 {
		t.Errorf("load pod resources %+v: want 500m and 80Mi requested, no CPU limit, 160Mi memory limit", c.Resources)
	}
	if _, cpuLimit := m.collector.Spec.Template.Spec.Containers[0].Resources.Limits[corev1.ResourceCPU]; cpuLimit {
		t.Error("the collector has a CPU limit")
	}
	if !bytes.Contains(out, []byte("# Load pods: CPU requested, not limited")) {
		t.Error("the manifests do not say why the load pods have no CPU limit")
	}
	for _, ns := range []string{m.sa.Namespace, m.cm.Namespace, m.svc.Namespace, job.Namespace, m.collector.Namespace, m.pvc.Namespace} {
		if ns != "bench" {
			t.Errorf("an object in namespace %q, want bench", ns)
		}
	}
	if got := m.collector.Spec.Template.Spec.Containers[0].Args; !slices.Contains(got, "--segments") || !slices.Contains(got, "8") {
		t.Errorf("collector args %v: want --segments 8", got)
	}
	if m.svc.Spec.Selector["app.kubernetes.io/component"] != "collector" || m.svc.Spec.Ports[0].Port != collectorPort {
		t.Errorf("collector service %+v does not select the collector on its port", m.svc.Spec)
	}
	back, err := plan.Parse("plan.yaml", []byte(m.cm.Data["plan.yaml"]))
	if err != nil || back.Load.Concurrency != 2000 || back.Load.Segment != "" {
		t.Errorf("the ConfigMap's plan reads back as %+v, %v", back, err)
	}
}

// TestK8sRefuses: what would put a secret where it must not be, or lacks
// what the pods need, is refused.
func TestK8sRefuses(t *testing.T) {
	t.Parallel()
	tests := []struct {
		plan string
		o    K8sOptions
		want string
	}{
		// A key in a header would land in the ConfigMap.
		{strings.Replace(k8sPlan, "api_key_env: OPENAI_API_KEY", "headers: {Authorization: Bearer sk-123}", 1), K8sOptions{Segments: 2, Image: "i"}, "holds a secret"},
		// A key file is on this machine, not in the pods, and a key never
		// goes into a ConfigMap.
		{strings.Replace(k8sPlan, "api_key_env: OPENAI_API_KEY", "api_key_file: /home/me/key", 1), K8sOptions{Segments: 2, Image: "i"}, "api_key_file"},
		// A dataset the pods could not have: it does not exist here either.
		{strings.Replace(k8sPlan, `output_tokens: "256"`, `output_tokens: "256", dataset: {path: /nonexistent/d.jsonl}`, 1), K8sOptions{Segments: 2, Image: "i"}, "workload.dataset.path"},
		{k8sPlan, K8sOptions{Segments: 2}, "image is required"},
		{k8sPlan, K8sOptions{Image: "i"}, "want at least 1"},
	}
	for _, tt := range tests {
		p, err := plan.Parse("plan.yaml", []byte(tt.plan))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := K8sManifests(p, tt.o); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("err = %v, want %q", err, tt.want)
		}
	}
	if _, err := ParseToleration("gpu=true:Sometimes"); err == nil {
		t.Error("a bad toleration effect was accepted")
	}
}
