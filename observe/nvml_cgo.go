//go:build cgo && linux

package observe

import (
	"context"
	"fmt"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
)

// nvmlBackend reads GPUs through NVML. go-nvml dlopens libnvidia-ml.so.1
// at Init, so a binary built here runs on machines without a driver: Init
// fails with ERROR_LIBRARY_NOT_FOUND and nvidia-smi is tried next.
type nvmlBackend struct {
	driver, cuda string
}

func openNVML() (gpuBackend, error) {
	if ret := nvml.Init(); ret != nvml.SUCCESS {
		return nil, fmt.Errorf("no NVML: %s", nvml.ErrorString(ret))
	}
	b := &nvmlBackend{}
	if v, ret := nvml.SystemGetDriverVersion(); ret == nvml.SUCCESS {
		b.driver = v
	}
	if v, ret := nvml.SystemGetCudaDriverVersion_v2(); ret == nvml.SUCCESS {
		b.cuda = fmt.Sprintf("%d.%d", v/1000, v%1000/10)
	}
	return b, nil
}

func (b *nvmlBackend) name() string { return "nvml" }
func (b *nvmlBackend) close()       { _ = nvml.Shutdown() }

func (b *nvmlBackend) read(context.Context) ([]GPU, error) {
	n, ret := nvml.DeviceGetCount()
	if ret != nvml.SUCCESS {
		return nil, fmt.Errorf("device count: %s", nvml.ErrorString(ret))
	}
	gpus := make([]GPU, 0, n)
	for i := range n {
		dev, ret := nvml.DeviceGetHandleByIndex(i)
		if ret != nvml.SUCCESS {
			return nil, fmt.Errorf("device %d: %s", i, nvml.ErrorString(ret))
		}
		gpus = append(gpus, b.device(i, dev))
	}
	return gpus, nil
}

// device reads one GPU; a figure the device does not support stays -1.
func (b *nvmlBackend) device(i int, dev nvml.Device) GPU {
	g := GPU{Index: i, Driver: b.driver, CUDA: b.cuda, MemTotalMiB: -1, MemUsedMiB: -1, UtilPct: -1, PowerW: -1}
	if v, ret := dev.GetName(); ret == nvml.SUCCESS {
		g.Name = v
	}
	if v, ret := dev.GetUUID(); ret == nvml.SUCCESS {
		g.UUID = v
	}
	if m, ret := dev.GetMemoryInfo(); ret == nvml.SUCCESS {
		g.MemTotalMiB, g.MemUsedMiB = float64(m.Total)/(1<<20), float64(m.Used)/(1<<20)
	}
	if u, ret := dev.GetUtilizationRates(); ret == nvml.SUCCESS {
		g.UtilPct = float64(u.Gpu)
	}
	if p, ret := dev.GetPowerUsage(); ret == nvml.SUCCESS {
		g.PowerW = float64(p) / 1000
	}
	return g
}
