package experiment

import (
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"runtime"

	"github.com/inferload/inferload/plan"
)

// Environment is env.json: what ran, where, against what. Later issues add
// the target's server version and GPUs; fields only grow.
type Environment struct {
	Client ClientEnv `json:"client"`
	Target TargetEnv `json:"target"`
}

// ClientEnv describes the load generator's host.
type ClientEnv struct {
	Hostname  string `json:"hostname,omitempty"`
	OS        string `json:"os"`
	Arch      string `json:"arch"`
	CPUs      int    `json:"cpus"`
	GoVersion string `json:"go_version"`
	Inferload string `json:"inferload_version"`
}

// TargetEnv describes the target as the plan declared it.
type TargetEnv struct {
	URL    string `json:"url"`
	API    string `json:"api"`
	Model  string `json:"model,omitempty"`
	Stream bool   `json:"stream"`
}

func environment(p *plan.Plan, version string) Environment {
	host, _ := os.Hostname()
	return Environment{
		Client: ClientEnv{Hostname: host, OS: runtime.GOOS, Arch: runtime.GOARCH,
			CPUs: runtime.NumCPU(), GoVersion: runtime.Version(), Inferload: version},
		Target: TargetEnv{URL: stripUserinfo(p.Target.URL), API: p.Target.API,
			Model: p.Target.Model, Stream: boolOr(p.Target.Stream, true)},
	}
}

// stripUserinfo keeps credentials embedded in a URL out of the run directory.
func stripUserinfo(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "[unparseable URL]"
	}
	u.User = nil
	return u.String()
}

func writeJSONFile(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("encoding %s: %w", path, err)
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}
