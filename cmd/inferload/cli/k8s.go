package cli

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/inferload/inferload/distributed"
	"github.com/inferload/inferload/plan"
)

func newK8sCmd(st *State) *cobra.Command {
	var file string
	var o distributed.K8sOptions
	var selectors, tolerations []string
	c := &cobra.Command{
		Use:   "k8s -f plan.yaml --shards N --image REGISTRY/inferload:TAG",
		Short: "Print Kubernetes manifests that run a plan from N pods and merge the result",
		Long: `Print plain manifests for kubectl apply: a ServiceAccount with no
permissions, the plan as a ConfigMap, a collector Job with its Service and a
results volume, and an Indexed Job of N load pods, pod I running segment
I/N of the plan and streaming its records to the collector, which merges
them into one run directory. The files the plan names (datasets, a
tokenizer.json, a trace, a CA bundle) go into the plan's ConfigMap, 1 MiB
in all; larger ones go on a volume (--files-claim). A target URL a pod
cannot reach (loopback, say) is warned about. Load pods request CPU
without a limit (a CFS quota throttles the client, which adds to every
latency it measures); --guaranteed-cpu gives whole cores instead. The API key comes from a Secret (create it
with kubectl create secret generic PREFIX-api-key --from-literal=ENV=KEY,
ENV being target.api_key_env); a plan holding a secret elsewhere is
refused. The collector's token comes from a Secret too, which the collector
and every load pod read (create it with kubectl create secret generic
PREFIX-collector-token --from-literal=token=$(openssl rand -hex 16)). See
docs/distributed.md.

  inferload k8s -f plan.yaml --shards 8 --image registry.local/inferload:v1 > job.yaml
  kubectl apply -f job.yaml`,
		Args: cobra.NoArgs,
	}
	flags := plan.BindFlags(c.Flags())
	c.Flags().StringVarP(&file, "file", "f", "", "YAML plan file (flags override its fields)")
	c.Flags().IntVar(&o.Segments, "shards", 0, "how many load pods (segments)")
	c.Flags().StringVar(&o.Image, "image", "", "the inferload container image")
	c.Flags().StringVar(&o.Namespace, "namespace", "", "namespace of every object (default: kubectl's)")
	c.Flags().StringVar(&o.Name, "prefix", "inferload", "prefix of every object's name")
	c.Flags().StringArrayVar(&selectors, "node-selector", nil, "place the load pods on nodes with this label, key=value (repeatable)")
	c.Flags().StringArrayVar(&tolerations, "toleration", nil, "let the load pods tolerate a taint, key=value:Effect or key:Effect (repeatable)")
	c.Flags().StringVar(&o.APIKeySecret, "api-key-secret", "", "the Secret holding the API key (default PREFIX-api-key)")
	c.Flags().StringVar(&o.TokenSecret, "token-secret", "", "the Secret holding the collector's token under the key token (default PREFIX-collector-token)")
	c.Flags().StringVar(&o.ResultsSize, "results-size", "1Gi", "size of the collector's results volume")
	c.Flags().StringVar(&o.Hold, "hold", "1h", "how long the collector stays up after merging, serving the run for inferload fetch")
	c.Flags().BoolVar(&o.GuaranteedCPU, "guaranteed-cpu", false, "give load pods whole cores with CPU limits equal to requests (Guaranteed QoS; for nodes with the static CPU manager policy) instead of requests without a CPU limit")
	c.Flags().StringVar(&o.FilesClaim, "files-claim", "", "a PersistentVolumeClaim mounted read-only at /data in every load pod, for plan files too large for the ConfigMap (name them by their /data/... path)")
	c.RunE = func(cmd *cobra.Command, _ []string) error {
		p, err := plan.Load(file, flags, nil)
		if err != nil {
			return usageError(err)
		}
		for _, s := range selectors {
			k, v, ok := strings.Cut(s, "=")
			if !ok || k == "" {
				return usageErrorf("--node-selector %q: want key=value", s)
			}
			if o.NodeSelector == nil {
				o.NodeSelector = map[string]string{}
			}
			o.NodeSelector[k] = v
		}
		for _, s := range tolerations {
			t, err := distributed.ParseToleration(s)
			if err != nil {
				return usageError(err)
			}
			o.Tolerations = append(o.Tolerations, t)
		}
		o.ReadFile = st.ReadFile
		out, err := distributed.K8sManifests(p, o)
		if err != nil {
			return usageError(err)
		}
		for _, w := range distributed.ClusterWarnings(p) {
			fmt.Fprintf(st.Stderr, "warning: %s\n", w)
		}
		_, err = st.Stdout.Write(out)
		return err
	}
	return c
}
