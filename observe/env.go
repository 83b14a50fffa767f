package observe

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"runtime"
	"strings"
	"time"
)

// Host describes the load generator's machine for env.json.
type Host struct {
	Hostname  string `json:"hostname,omitempty"`
	OS        string `json:"os"`
	Arch      string `json:"arch"`
	CPUModel  string `json:"cpu_model,omitempty"`
	CPUs      int    `json:"cpus"`
	GoVersion string `json:"go_version"`
	Inferload string `json:"inferload_version"`
}

// HostInfo reads the client host; the CPU model comes from /proc/cpuinfo
// where there is one.
func HostInfo(version string) Host {
	name, _ := os.Hostname()
	return Host{Hostname: name, OS: runtime.GOOS, Arch: runtime.GOARCH, CPUModel: cpuModel("/proc/cpuinfo"),
		CPUs: runtime.NumCPU(), GoVersion: runtime.Version(), Inferload: version}
}

func cpuModel(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// Served is what the target says about itself: its /models list and the
// response headers that name the server.
type Served struct {
	// Models are the ids /models lists, with max_model_len where the
	// server exposes it (vLLM, SGLang).
	Models []ServedModel `json:"models,omitempty"`
	// Headers are the identifying response headers (Server, X-Powered-By,
	// any *version*), lower-cased.
	Headers map[string]string `json:"headers,omitempty"`
	// Version is the server's own version, from the native APIs'
	// endpoints that report one (TGI's /info, Ollama's /api/version,
	// Triton's /v2).
	Version string `json:"version,omitempty"`
	// Error says why the probe failed; the run goes on regardless.
	Error string `json:"error,omitempty"`
}

// ServedModel is one entry of /models.
type ServedModel struct {
	ID         string `json:"id"`
	OwnedBy    string `json:"owned_by,omitempty"`
	MaxContext int    `json:"max_context,omitempty"`
}

// ProbeTarget GETs <base>/models once, with the given headers (the API
// key), within 5 seconds. Failure is recorded, never returned: the target
// may not implement /models.
func ProbeTarget(ctx context.Context, client *http.Client, base string, headers http.Header) Served {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	url := strings.TrimRight(base, "/") + "/models"
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return Served{Error: err.Error()}
	}
	req.Header = headers.Clone()
	resp, err := client.Do(req)
	if err != nil {
		return Served{Error: fmt.Sprintf("GET %s: %v", url, err)}
	}
	defer resp.Body.Close()
	sv := Served{Headers: identifying(resp.Header)}
	if resp.StatusCode != http.StatusOK {
		sv.Error = fmt.Sprintf("GET %s: HTTP %s", url, resp.Status)
		return sv
	}
	var body struct {
		Data []struct {
			ID          string `json:"id"`
			OwnedBy     string `json:"owned_by"`
			MaxModelLen int    `json:"max_model_len"`
		} `json:"data"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&body); err != nil {
		sv.Error = fmt.Sprintf("GET %s: not an OpenAI model list: %v", url, err)
		return sv
	}
	for _, d := range body.Data {
		sv.Models = append(sv.Models, ServedModel{ID: d.ID, OwnedBy: d.OwnedBy, MaxContext: d.MaxModelLen})
	}
	return sv
}

// identifying keeps the headers that say what software answered.
func identifying(h http.Header) map[string]string {
	out := map[string]string{}
	for k, v := range h {
		lk := strings.ToLower(k)
		if lk == "server" || lk == "x-powered-by" || strings.Contains(lk, "version") {
			out[lk] = strings.Join(v, ", ")
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// DCGMGPUs lists the GPUs a DCGM exporter describes in its labels
// (modelName, UUID, gpu, DCGM_FI_DRIVER_VERSION), for env.json when the
// GPUs are on the server and not local.
func DCGMGPUs(fams families) []GPU {
	f := fams["DCGM_FI_DEV_FB_USED"]
	if f == nil {
		return nil
	}
	var gpus []GPU
	for i, m := range f.GetMetric() {
		g := GPU{Index: i, MemUsedMiB: m.GetGauge().GetValue(), MemTotalMiB: -1, UtilPct: -1, PowerW: -1}
		for _, l := range m.GetLabel() {
			switch l.GetName() {
			case "modelName":
				g.Name = l.GetValue()
			case "UUID":
				g.UUID = l.GetValue()
			case "DCGM_FI_DRIVER_VERSION":
				g.Driver = l.GetValue()
			}
		}
		gpus = append(gpus, g)
	}
	return gpus
}

// ScrapeGPUs fetches one /metrics page and returns the GPUs its DCGM
// labels describe (nil when it has none or the scrape fails).
func ScrapeGPUs(ctx context.Context, client *http.Client, url string) []GPU {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	fams, err := fetchMetrics(ctx, client, url, DefaultMaxBody)
	if err != nil {
		return nil
	}
	return DCGMGPUs(fams)
}

// ProbeGPUs reads the local GPUs once for env.json: NVML, then
// nvidia-smi, else the "no GPU" state with its reasons.
func ProbeGPUs(ctx context.Context, smiPath string) GPUState {
	b, st := openGPU(ctx, smiPath)
	if b != nil {
		b.close()
	}
	return st
}
