package distributed

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/inferload/inferload/internal/inputfile"
	"github.com/inferload/inferload/plan"
)

// maxConfigMap is the most a ConfigMap holds: Kubernetes refuses one
// whose data and binaryData values come to more than 1 MiB.
const maxConfigMap = 1 << 20

// planMount is where the load pods find the plan's ConfigMap: plan.yaml
// and every file the plan names, each a key of it.
const planMount = "/plan"

// claimMount is where --files-claim's volume is mounted in the load pods.
const claimMount = "/data"

// configMapFile bounds the read of a file bound for the ConfigMap: one
// byte past its limit says it does not fit.
var configMapFile = inputfile.Kind{Name: "a file for a ConfigMap", Limit: maxConfigMap}

// readBounded reads a plan's file as the manifests need it, bounded.
func readBounded(path string) ([]byte, error) {
	return inputfile.Read(context.Background(), path, configMapFile)
}

// shipped is what the plan's ConfigMap carries: the plan as the pods
// read it and the files it names, by key.
type shipped struct {
	plan  []byte
	files map[string][]byte
}

// shippablePlan is the plan as the ConfigMap carries it: without its
// output directory (each pod writes its own) or segment, every file it
// names read into the ConfigMap and its field rewritten to the file's
// path in the pod (a file under --files-claim's mount is left where it
// is), refused if any value in it is a secret (a key belongs in the
// Secret, named by target.api_key_env) or if it all does not fit a
// ConfigMap.
func shippablePlan(p *plan.Plan, o K8sOptions) (shipped, error) {
	c := *p
	c.Output = plan.Output{}
	c.Load.Segment = ""
	c.Workload.Classes = slices.Clone(p.Workload.Classes) // their dataset paths are rewritten
	files, err := shipFiles(&c, o)
	if err != nil {
		return shipped{}, err
	}
	redacted, err := c.Redacted()
	if err != nil {
		return shipped{}, err
	}
	if bytes.Contains(redacted, []byte(plan.Redaction)) {
		return shipped{}, errors.New("k8s: the plan holds a secret (a header, body field or URL credential): pass the API key with target.api_key_env and a Secret instead, so it never lands in a ConfigMap")
	}
	s := shipped{plan: redacted, files: files}
	if total := s.size(); total > maxConfigMap {
		return shipped{}, fmt.Errorf("k8s: plan.yaml and the files it names come to %s, over the 1 MiB a ConfigMap holds: %s",
			sizeOf(total), claimHint)
	}
	return s, nil
}

// claimHint is the way around a ConfigMap's size.
const claimHint = "put the large files on a PersistentVolumeClaim, pass --files-claim NAME (mounted read-only at " + claimMount +
	" in every load pod) and name each by its path there in the plan (e.g. workload.dataset.path: " + claimMount + "/sharegpt.json)"

// shipFiles reads every file p names into the ConfigMap's keys and points
// its field at the key's path in the pod. One file named twice is one key.
func shipFiles(p *plan.Plan, o K8sOptions) (map[string][]byte, error) {
	files := map[string][]byte{}
	keyOf := map[string]string{} // by the path as the plan gave it
	for _, ref := range p.Files() {
		if ref.Secret {
			return nil, fmt.Errorf("k8s: %s names a local file the pods do not have, and a key must not go in a ConfigMap: use target.api_key_env and a Secret", ref.Field)
		}
		if o.FilesClaim != "" && strings.HasPrefix(path.Clean(*ref.Path), claimMount+"/") {
			continue // on the claim, read in the pod
		}
		key, ok := keyOf[*ref.Path]
		if !ok {
			body, err := o.ReadFile(*ref.Path)
			if _, isBig := errors.AsType[*inputfile.TooLargeError](err); isBig || len(body) > maxConfigMap {
				return nil, fmt.Errorf("k8s: %s %s is larger than the 1 MiB a ConfigMap holds: %s", ref.Field, *ref.Path, claimHint)
			}
			if err != nil {
				return nil, fmt.Errorf("k8s: %s: %w", ref.Field, err)
			}
			key = fileKey(*ref.Path, files)
			keyOf[*ref.Path] = key
			files[key] = body
		}
		*ref.Path = planMount + "/" + key
	}
	return files, nil
}

// notKeyChars are the characters a ConfigMap key may not hold.
var notKeyChars = regexp.MustCompile(`[^-._a-zA-Z0-9]`)

// fileKey is the ConfigMap key of a file: its base name made a valid key,
// numbered when another file (or plan.yaml) has it already.
func fileKey(p string, taken map[string][]byte) string {
	base := notKeyChars.ReplaceAllString(filepath.Base(p), "_")
	if base == "" || base == "." || base == ".." {
		base = "file"
	}
	key := base
	for n := 2; key == "plan.yaml" || hasKey(taken, key); n++ {
		key = fmt.Sprintf("%d-%s", n, base)
	}
	return key
}

func hasKey(m map[string][]byte, k string) bool { _, ok := m[k]; return ok }

// size is what Kubernetes counts against maxConfigMap: every value.
func (s shipped) size() int {
	n := len(s.plan)
	for _, b := range s.files {
		n += len(b)
	}
	return n
}

// sizeOf writes a byte count for a person: 1.3 MiB, 812 KiB.
func sizeOf(n int) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.0f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}
