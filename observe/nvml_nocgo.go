//go:build !cgo || !linux

package observe

import "errors"

// openNVML is unavailable without cgo on Linux: go-nvml needs cgo to
// dlopen libnvidia-ml. nvidia-smi is tried instead.
func openNVML() (gpuBackend, error) {
	return nil, errors.New("no NVML (this build has no cgo, or is not for Linux)")
}
