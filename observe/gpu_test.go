package observe

import (
	"context"
	"os"
	"strings"
	"testing"
)

// TestParseSMI reads nvidia-smi's CSV: numbers as numbers, [N/A] as -1.
func TestParseSMI(t *testing.T) {
	t.Parallel()
	f, err := os.Open("testdata/nvidia-smi.csv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	gpus, err := parseSMI(f)
	if err != nil {
		t.Fatal(err)
	}
	if len(gpus) != 2 || gpus[0].Name != "NVIDIA H100 80GB HBM3" || gpus[0].MemUsedMiB != 75310 ||
		gpus[0].PowerW != 645.12 || gpus[1].PowerW != -1 || gpus[1].Driver != "550.54.15" {
		t.Fatalf("gpus = %+v", gpus)
	}
	var s Sample
	gpuSample(&s, gpus)
	// Utilisation is the mean (97+0)/2, power sums only the GPUs that report it.
	if s.Values[GPUUtil] != 48.5 || s.Values[GPUPowerW] != 645.12 || s.Values[GPUMemTotalMiB] != 2*81559 {
		t.Fatalf("values = %v", s.Values)
	}
}

// TestParseSMIErrors: malformed output is an error naming the line.
func TestParseSMIErrors(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"0, A100, GPU-x, 550, 1, 2, 3\n", "line 1"},                   // a field short
		{"zero, A100, GPU-x, 550, 1, 2, 3, 4\n", `index "zero"`},       // an index that is not a number
		{"0, A, U, 5, 1, 2, 3, 4\nx, A, U, 5, 1, 2, 3, 4\n", "line 2"}, // the bad line is named
	}
	for _, tt := range tests {
		if _, err := parseSMI(strings.NewReader(tt.in)); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("parseSMI(%q) err = %v, want %q", tt.in, err, tt.want)
		}
	}
}

// TestNoGPUIsAState: on a machine without a driver or nvidia-smi, probing
// GPUs is the "none" state with reasons for each backend, never an error.
func TestNoGPUIsAState(t *testing.T) {
	t.Parallel()
	st := ProbeGPUs(context.Background(), "/nonexistent/nvidia-smi")
	if st.Backend != "none" || len(st.GPUs) != 0 || !strings.Contains(st.Reason, "NVML") || !strings.Contains(st.Reason, "nvidia-smi") {
		t.Fatalf("state = %+v", st)
	}
}

// TestFakeNvidiaSMI: the nvidia-smi fallback runs the executable and
// parses its output (a shell script stands in for the real tool).
func TestFakeNvidiaSMI(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	script := dir + "/nvidia-smi"
	body := "#!/bin/sh\ncat " + mustAbs(t, "testdata/nvidia-smi.csv") + "\n"
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	b := &smiBackend{path: script}
	gpus, err := b.read(context.Background())
	if err != nil || len(gpus) != 2 {
		t.Fatalf("gpus = %+v, err = %v", gpus, err)
	}
}

func mustAbs(t *testing.T, p string) string {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	return wd + "/" + p
}
