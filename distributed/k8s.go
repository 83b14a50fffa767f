package distributed

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"

	"github.com/inferload/inferload/plan"
	"github.com/inferload/inferload/record"
)

// K8sOptions describe the Kubernetes objects of a distributed run.
type K8sOptions struct {
	// Segments is how many load pods (N): each runs segment I/N.
	Segments int
	// Image is the inferload container image.
	Image string
	// Namespace, when set, is every object's namespace.
	Namespace string
	// Name prefixes every object's name (default "inferload").
	Name string
	// NodeSelector and Tolerations place the load pods.
	NodeSelector map[string]string
	Tolerations  []Toleration
	// APIKeySecret names the Secret that holds the plan's API key (under
	// the key named by target.api_key_env); default NAME-api-key.
	APIKeySecret string
	// TokenSecret names the Secret that holds the collector's token
	// under the key "token"; default NAME-collector-token. Both the
	// collector and the load pods read it as $INFERLOAD_COLLECTOR_TOKEN.
	TokenSecret string
	// ResultsSize is the collector's results volume (default 1Gi).
	ResultsSize string
	// Hold is how long the collector stays up after merging, for
	// `inferload fetch` (default 1h).
	Hold string
	// GuaranteedCPU gives the load pods whole cores with requests equal
	// to limits (Guaranteed QoS) instead of a CPU request without a limit.
	GuaranteedCPU bool
	// FilesClaim names a PersistentVolumeClaim mounted read-only at /data
	// in every load pod, for files too large for a ConfigMap; the plan
	// names them by their path there.
	FilesClaim string
	// ReadFile reads the files the plan names, for the ConfigMap (nil:
	// from disk, bounded).
	ReadFile func(string) ([]byte, error)
}

// Toleration is a pod toleration, key=value:effect or key:effect.
type Toleration struct {
	Key, Operator, Value, Effect string
}

// ParseToleration reads "key=value:Effect" or "key:Effect" (Exists).
func ParseToleration(s string) (Toleration, error) {
	kv, effect, ok := strings.Cut(s, ":")
	if !ok || kv == "" {
		return Toleration{}, fmt.Errorf("toleration %q: want key=value:Effect or key:Effect", s)
	}
	switch effect {
	case "NoSchedule", "PreferNoSchedule", "NoExecute":
	default:
		return Toleration{}, fmt.Errorf("toleration %q: effect %q: want NoSchedule, PreferNoSchedule or NoExecute", s, effect)
	}
	if k, v, ok := strings.Cut(kv, "="); ok {
		return Toleration{Key: k, Operator: "Equal", Value: v, Effect: effect}, nil
	}
	return Toleration{Key: kv, Operator: "Exists", Effect: effect}, nil
}

// collectorPort is where the collector listens in its pod.
const collectorPort = 8089

// streamsPerCore and memPerStreamKiB size a load pod from the streams it
// holds: BENCHMARKS.md measures about 27 KiB per open stream and well
// under a core per 500 streams for the client; both are doubled for
// headroom, on a 64 MiB base.
const (
	streamsPerCore  = 500
	memPerStreamKiB = 64
	baseMemMiB      = 64
)

// K8sManifests renders the plan as plain manifests for `kubectl apply`: a
// ServiceAccount with no permissions; the plan as a ConfigMap; a
// collector Job with its Service and results volume; and an Indexed Job
// of Segments load pods, pod I running segment I/N and streaming to the
// collector. The API key comes from a Secret, never from the ConfigMap or
// the arguments; a plan holding a secret value elsewhere is refused.
func K8sManifests(p *plan.Plan, o K8sOptions) ([]byte, error) {
	o, err := o.withDefaults()
	if err != nil {
		return nil, err
	}
	ship, err := shippablePlan(p, o)
	if err != nil {
		return nil, err
	}
	docs := []struct {
		comment string
		obj     any
	}{
		{"", o.serviceAccount()},
		{"", o.configMap(ship)},
		{"", o.resultsClaim()},
		{"", o.collectorService()},
		{"", o.collectorJob()},
		{o.cpuComment(), o.loadJob(p)},
	}
	var buf bytes.Buffer
	for i, d := range docs {
		if i > 0 {
			buf.WriteString("---\n")
		}
		buf.WriteString(d.comment)
		enc := yaml.NewEncoder(&buf)
		enc.SetIndent(2)
		if err := enc.Encode(d.obj); err != nil {
			return nil, fmt.Errorf("k8s: %w", err)
		}
		if err := enc.Close(); err != nil {
			return nil, fmt.Errorf("k8s: %w", err)
		}
	}
	return buf.Bytes(), nil
}

func (o K8sOptions) withDefaults() (K8sOptions, error) {
	switch {
	case o.Segments < 1:
		return o, fmt.Errorf("k8s: %d shards: want at least 1", o.Segments)
	case o.Image == "":
		return o, errors.New("k8s: the image is required (--image REGISTRY/inferload:TAG)")
	}
	if o.Name == "" {
		o.Name = "inferload"
	}
	if o.APIKeySecret == "" {
		o.APIKeySecret = o.Name + "-api-key"
	}
	if o.TokenSecret == "" {
		o.TokenSecret = o.Name + "-collector-token"
	}
	if o.ResultsSize == "" {
		o.ResultsSize = "1Gi"
	}
	if o.Hold == "" {
		o.Hold = "1h"
	}
	if o.ReadFile == nil {
		o.ReadFile = readBounded
	}
	return o, nil
}

func (o K8sOptions) meta(name string, labels map[string]string) map[string]any {
	m := map[string]any{"name": name, "labels": labels}
	if o.Namespace != "" {
		m["namespace"] = o.Namespace
	}
	return m
}

func (o K8sOptions) labels(component string) map[string]string {
	return map[string]string{"app.kubernetes.io/name": "inferload", "app.kubernetes.io/instance": o.Name,
		"app.kubernetes.io/component": component}
}

func (o K8sOptions) serviceAccount() map[string]any {
	return map[string]any{"apiVersion": "v1", "kind": "ServiceAccount",
		"metadata": o.meta(o.Name, o.labels("load")), "automountServiceAccountToken": false}
}

// configMap holds plan.yaml and the files the plan names: text as data,
// anything else (not UTF-8) as binaryData.
func (o K8sOptions) configMap(s shipped) map[string]any {
	data := map[string]string{"plan.yaml": string(s.plan)}
	binary := map[string]string{}
	for key, b := range s.files {
		if utf8.Valid(b) {
			data[key] = string(b)
		} else {
			binary[key] = base64.StdEncoding.EncodeToString(b)
		}
	}
	cm := map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": o.meta(o.Name+"-plan", o.labels("plan")), "data": data}
	if len(binary) > 0 {
		cm["binaryData"] = binary
	}
	return cm
}

func (o K8sOptions) resultsClaim() map[string]any {
	return map[string]any{"apiVersion": "v1", "kind": "PersistentVolumeClaim",
		"metadata": o.meta(o.Name+"-results", o.labels("collector")),
		"spec": map[string]any{"accessModes": []string{"ReadWriteOnce"},
			"resources": map[string]any{"requests": map[string]string{"storage": o.ResultsSize}}}}
}

func (o K8sOptions) collectorService() map[string]any {
	return map[string]any{"apiVersion": "v1", "kind": "Service",
		"metadata": o.meta(o.Name+"-collector", o.labels("collector")),
		"spec": map[string]any{"selector": o.labels("collector"),
			"ports": []map[string]any{{"name": "collector", "port": collectorPort, "targetPort": collectorPort}}}}
}

// securityContext is every container's: not root, no privilege, nothing
// written outside its volumes.
func securityContext() map[string]any {
	return map[string]any{"runAsNonRoot": true, "runAsUser": 65532, "runAsGroup": 65532,
		"allowPrivilegeEscalation": false, "readOnlyRootFilesystem": true,
		"capabilities": map[string]any{"drop": []string{"ALL"}}, "seccompProfile": map[string]string{"type": "RuntimeDefault"}}
}

// tokenEnv is $INFERLOAD_COLLECTOR_TOKEN from the token's Secret: the
// collector listens beyond loopback, so it needs one, and every load pod
// sends it.
func (o K8sOptions) tokenEnv() map[string]any {
	return map[string]any{"name": TokenEnv, "valueFrom": map[string]any{
		"secretKeyRef": map[string]string{"name": o.TokenSecret, "key": "token"}}}
}

func (o K8sOptions) collectorJob() map[string]any {
	container := map[string]any{
		"env":  []map[string]any{o.tokenEnv()},
		"name": "collector", "image": o.Image,
		"args": []string{"collect", "--listen", fmt.Sprintf("0.0.0.0:%d", collectorPort), "--segments", strconv.Itoa(o.Segments),
			"--dir", "/results/collect", "--out", "/results/runs", "--hold", o.Hold},
		"ports":           []map[string]any{{"name": "collector", "containerPort": collectorPort}},
		"securityContext": securityContext(),
		// No CPU limit, as for the load pods: a throttled collector would
		// widen the segments' clock measurement (cpuComment).
		"resources": map[string]any{"requests": map[string]string{"cpu": "500m", "memory": "256Mi"},
			"limits": map[string]string{"memory": "1Gi"}},
		"volumeMounts": []map[string]any{{"name": "results", "mountPath": "/results"}},
	}
	pod := map[string]any{
		"serviceAccountName": o.Name, "automountServiceAccountToken": false, "restartPolicy": "Never",
		"securityContext": map[string]any{"runAsNonRoot": true, "fsGroup": 65532},
		"containers":      []any{container},
		"volumes":         []map[string]any{{"name": "results", "persistentVolumeClaim": map[string]string{"claimName": o.Name + "-results"}}},
	}
	return map[string]any{"apiVersion": "batch/v1", "kind": "Job",
		"metadata": o.meta(o.Name+"-collector", o.labels("collector")),
		"spec": map[string]any{"backoffLimit": 0,
			"template": map[string]any{"metadata": map[string]any{"labels": o.labels("collector")}, "spec": pod}}}
}

// loadJob is the Indexed Job of the load pods.
func (o K8sOptions) loadJob(p *plan.Plan) map[string]any {
	seg := fmt.Sprintf("$(JOB_COMPLETION_INDEX)/%d", o.Segments)
	env := []map[string]any{{"name": "JOB_COMPLETION_INDEX", "valueFrom": map[string]any{
		"fieldRef": map[string]string{"fieldPath": "metadata.annotations['batch.kubernetes.io/job-completion-index']"}}}, o.tokenEnv()}
	if k := p.Target.APIKeyEnv; k != "" {
		env = append(env, map[string]any{"name": k, "valueFrom": map[string]any{
			"secretKeyRef": map[string]string{"name": o.APIKeySecret, "key": k}}})
	}
	volumes, mounts := o.loadVolumes()
	container := map[string]any{
		"name": "load", "image": o.Image,
		"args": []string{"run", "-f", "/plan/plan.yaml", "--segment", seg,
			"--collector", fmt.Sprintf("http://%s-collector:%d", o.Name, collectorPort), "--out", "/work/runs", "-q"},
		"env":             env,
		"securityContext": securityContext(),
		"resources":       o.loadResources(p),
		"volumeMounts":    mounts,
	}
	labels := o.labels("load")
	pod := map[string]any{
		"serviceAccountName": o.Name, "automountServiceAccountToken": false, "restartPolicy": "Never",
		"securityContext": map[string]any{"runAsNonRoot": true},
		"containers":      []any{container},
		"volumes":         volumes,
		// One load pod a node where the cluster allows: two on one node
		// share its CPU and network, the very limit sharding is for.
		"topologySpreadConstraints": []map[string]any{{"maxSkew": 1, "topologyKey": "kubernetes.io/hostname",
			"whenUnsatisfiable": "ScheduleAnyway", "labelSelector": map[string]any{"matchLabels": labels}}},
		"affinity": map[string]any{"podAntiAffinity": map[string]any{"preferredDuringSchedulingIgnoredDuringExecution": []map[string]any{{
			"weight": 100, "podAffinityTerm": map[string]any{"topologyKey": "kubernetes.io/hostname",
				"labelSelector": map[string]any{"matchLabels": labels}}}}}},
	}
	if len(o.NodeSelector) > 0 {
		pod["nodeSelector"] = o.NodeSelector
	}
	if len(o.Tolerations) > 0 {
		var ts []map[string]string
		for _, t := range o.Tolerations {
			m := map[string]string{"key": t.Key, "operator": t.Operator, "effect": t.Effect}
			if t.Value != "" {
				m["value"] = t.Value
			}
			ts = append(ts, m)
		}
		pod["tolerations"] = ts
	}
	return map[string]any{"apiVersion": "batch/v1", "kind": "Job",
		"metadata": o.meta(o.Name+"-load", labels),
		// A restarted pod would run its segment again from the start,
		// which the collector cannot tell from the first: no retries.
		"spec": map[string]any{"completionMode": "Indexed", "completions": o.Segments, "parallelism": o.Segments, "backoffLimit": 0,
			"template": map[string]any{"metadata": map[string]any{"labels": labels}, "spec": pod}}}
}

// podSize is a load pod's CPU (millicores) and memory (MiB) request from
// the streams it holds at most: its share of the users (or of the
// in-flight cap of an open loop; 100 streams a pod when nothing bounds
// them).
func podSize(p *plan.Plan, segments int) (milli, mib int) {
	streams := 100
	switch l := p.Load; {
	case l.Mode() == record.ModeClosed:
		streams = (p.Load.MaxUsers() + segments - 1) / segments
	case l.MaxInFlight > 0:
		streams = (l.MaxInFlight + segments - 1) / segments
	}
	milli = max(250, int(math.Ceil(float64(streams)*1000/streamsPerCore)))
	mib = baseMemMiB + int(math.Ceil(float64(streams*memPerStreamKiB)/1024))
	return milli, mib
}

// loadVolumes are the load pods' volumes and their mounts: the plan's
// ConfigMap (plan.yaml and the files it names) at planMount, a scratch
// directory for the run directory, and --files-claim read-only at
// claimMount.
func (o K8sOptions) loadVolumes() (volumes, mounts []map[string]any) {
	volumes = []map[string]any{{"name": "plan", "configMap": map[string]string{"name": o.Name + "-plan"}},
		{"name": "work", "emptyDir": map[string]any{}}}
	mounts = []map[string]any{{"name": "plan", "mountPath": planMount, "readOnly": true}, {"name": "work", "mountPath": "/work"}}
	if o.FilesClaim != "" {
		volumes = append(volumes, map[string]any{"name": "files", "persistentVolumeClaim": map[string]any{"claimName": o.FilesClaim, "readOnly": true}})
		mounts = append(mounts, map[string]any{"name": "files", "mountPath": claimMount, "readOnly": true})
	}
	return volumes, mounts
}

// loadResources are a load pod's requests and limits. By default CPU is
// requested, never limited: a limit is a CFS quota, and a pod that uses
// its quota early in a 100 ms period is stopped until the next one, so a
// token that arrives meanwhile is read up to that much later, a delay the
// client adds to every latency it measures. Memory keeps a limit (twice
// the request). GuaranteedCPU asks for whole cores with requests equal to
// limits instead (Guaranteed QoS), which a kubelet with the static CPU
// manager policy turns into cores of the pod's own.
func (o K8sOptions) loadResources(p *plan.Plan) map[string]any {
	milli, mib := podSize(p, o.Segments)
	if o.GuaranteedCPU {
		cores := strconv.Itoa((milli + 999) / 1000)
		both := map[string]string{"cpu": cores, "memory": fmt.Sprintf("%dMi", 2*mib)}
		return map[string]any{"requests": both, "limits": both}
	}
	return map[string]any{"requests": map[string]string{"cpu": fmt.Sprintf("%dm", milli), "memory": fmt.Sprintf("%dMi", mib)},
		"limits": map[string]string{"memory": fmt.Sprintf("%dMi", 2*mib)}}
}

// cpuComment heads the load Job in the manifests: why its CPU is what it is.
func (o K8sOptions) cpuComment() string {
	if o.GuaranteedCPU {
		return "# Load pods: whole cores, requests = limits (Guaranteed QoS, --guaranteed-cpu). Without the\n" +
			"# kubelet's static CPU manager policy the limit is a CFS quota that throttles the client.\n"
	}
	return "# Load pods: CPU requested, not limited. A CPU limit is a CFS quota: a pod that spends it\n" +
		"# early in a period waits for the next, and that wait is added to every latency it measures.\n"
}
