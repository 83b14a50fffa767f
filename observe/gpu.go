package observe

import (
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// GPU is one local GPU as NVML or nvidia-smi saw it. Figures a backend
// could not read are negative.
type GPU struct {
	Index       int     `json:"index"`
	Name        string  `json:"name"`
	UUID        string  `json:"uuid,omitempty"`
	Driver      string  `json:"driver,omitempty"`
	CUDA        string  `json:"cuda,omitempty"`
	MemTotalMiB float64 `json:"memory_total_mib"`
	MemUsedMiB  float64 `json:"memory_used_mib"`
	UtilPct     float64 `json:"util_pct"`
	PowerW      float64 `json:"power_w"`
}

// gpuBackend reads the local GPUs.
type gpuBackend interface {
	name() string
	read(ctx context.Context) ([]GPU, error)
	close()
}

// GPUState says which backend sampled local GPUs, or why none did. No GPU
// is a normal state, never an error.
type GPUState struct {
	Backend string `json:"backend"` // nvml, nvidia-smi or none
	Reason  string `json:"reason,omitempty"`
	GPUs    []GPU  `json:"gpus,omitempty"`
}

// openGPU tries NVML, then nvidia-smi. The returned backend is nil when
// neither works, and the state says why each failed.
func openGPU(ctx context.Context, smiPath string) (gpuBackend, GPUState) {
	var reasons []string
	if b, err := openNVML(); err == nil {
		if gpus, err := b.read(ctx); err == nil && len(gpus) > 0 {
			return b, GPUState{Backend: b.name(), GPUs: gpus}
		} else if err != nil {
			reasons = append(reasons, "NVML: "+err.Error())
		} else {
			reasons = append(reasons, "NVML: no devices")
		}
		b.close()
	} else {
		reasons = append(reasons, err.Error())
	}
	smi := &smiBackend{path: smiPath}
	gpus, err := smi.read(ctx)
	if err == nil && len(gpus) > 0 {
		return smi, GPUState{Backend: smi.name(), GPUs: gpus}
	}
	if err == nil {
		err = errors.New("no devices")
	}
	reasons = append(reasons, "nvidia-smi: "+err.Error())
	return nil, GPUState{Backend: "none", Reason: "no GPU: " + strings.Join(reasons, "; ")}
}

// gpuSample turns a reading into the GPU series: utilisation averaged over
// GPUs, memory and power summed.
func gpuSample(s *Sample, gpus []GPU) {
	var util, used, tot, power float64
	nUtil, nPower := 0, 0
	for _, g := range gpus {
		if g.UtilPct >= 0 {
			util += g.UtilPct
			nUtil++
		}
		if g.PowerW >= 0 {
			power += g.PowerW
			nPower++
		}
		used += max(g.MemUsedMiB, 0)
		tot += max(g.MemTotalMiB, 0)
	}
	if nUtil > 0 {
		s.set(GPUUtil, util/float64(nUtil))
	}
	if nPower > 0 {
		s.set(GPUPowerW, power)
	}
	if tot > 0 {
		s.set(GPUMemUsedMiB, used)
		s.set(GPUMemTotalMiB, tot)
		s.set(GPUMemUsedFrac, used/tot)
	}
}

// smiQuery is the nvidia-smi field list, in the order parseSMI reads it.
const smiQuery = "index,name,uuid,driver_version,memory.total,memory.used,utilization.gpu,power.draw"

// smiBackend runs nvidia-smi once per sample: slower than NVML (tens of
// ms) but needs no cgo.
type smiBackend struct{ path string }

func (b *smiBackend) name() string { return "nvidia-smi" }
func (b *smiBackend) close()       {}

func (b *smiBackend) read(ctx context.Context) ([]GPU, error) {
	path := b.path
	if path == "" {
		path = "nvidia-smi"
	}
	bin, err := exec.LookPath(path)
	if err != nil {
		return nil, fmt.Errorf("not found: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, bin, "--query-gpu="+smiQuery, "--format=csv,noheader,nounits").Output()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", bin, err)
	}
	return parseSMI(strings.NewReader(string(out)))
}

// parseSMI reads `nvidia-smi --query-gpu=<smiQuery>
// --format=csv,noheader,nounits`. Fields a GPU does not support read
// "[N/A]" (or "[Not Supported]") and become -1.
func parseSMI(r io.Reader) ([]GPU, error) {
	cr := csv.NewReader(r)
	cr.TrimLeadingSpace = true
	cr.FieldsPerRecord = 8
	var gpus []GPU
	for line := 1; ; line++ {
		rec, err := cr.Read()
		if err == io.EOF {
			return gpus, nil
		}
		if err != nil {
			return nil, fmt.Errorf("nvidia-smi output line %d: %w", line, err)
		}
		idx, err := strconv.Atoi(strings.TrimSpace(rec[0]))
		if err != nil {
			return nil, fmt.Errorf("nvidia-smi output line %d: index %q: %w", line, rec[0], err)
		}
		gpus = append(gpus, GPU{Index: idx, Name: strings.TrimSpace(rec[1]), UUID: strings.TrimSpace(rec[2]),
			Driver: strings.TrimSpace(rec[3]), MemTotalMiB: smiNumber(rec[4]), MemUsedMiB: smiNumber(rec[5]),
			UtilPct: smiNumber(rec[6]), PowerW: smiNumber(rec[7])})
	}
}

// smiNumber parses one numeric field; anything else ("[N/A]") is -1.
func smiNumber(s string) float64 {
	v, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil {
		return -1
	}
	return v
}
