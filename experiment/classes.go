package experiment

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/inferload/inferload/rundir"
	"go.yaml.in/yaml/v3"
)

// planLengthBuckets reads workload.length_buckets from a run directory's
// plan.yaml, so a rebuilt summary splits requests by input length exactly
// as the live run did; nil (the default buckets) when the plan has none.
func planLengthBuckets(dir string) ([]int, error) {
	path := filepath.Join(dir, rundir.Plan)
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%s is not a run directory: %w", dir, err)
	}
	var p struct {
		Workload struct {
			LengthBuckets []int `yaml:"length_buckets"`
		} `yaml:"workload"`
	}
	if err := yaml.Unmarshal(raw, &p); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return p.Workload.LengthBuckets, nil
}
