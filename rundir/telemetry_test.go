package rundir

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestReadTelemetry: samples read back in order; a missing file is no
// samples; a killed run's cut-short last line is skipped; a corrupt line
// elsewhere names its line.
func TestReadTelemetry(t *testing.T) {
	t.Parallel()
	got, err := ReadTelemetry[sample](filepath.Join(t.TempDir(), "missing.jsonl"))
	if err != nil || got != nil {
		t.Fatalf("missing file: %v, %v; want no samples and no error", got, err)
	}
	two := `{"t_s":1,"source":"server","values":{"q":2}}` + "\n" + `{"t_s":2,"source":"server","values":{"q":3}}` + "\n"
	got, err = ReadTelemetry[sample](writeFile(t, two+`{"t_s":3,"sou`))
	if err != nil || len(got) != 2 || got[1].Values["q"] != 3 {
		t.Fatalf("got %+v, %v: want the two whole samples", got, err)
	}
	if _, err := ReadTelemetry[sample](writeFile(t, "{\n"+two)); err == nil || !strings.Contains(err.Error(), "line 1") {
		t.Errorf("corrupt first line: err = %v, want it named", err)
	}
}

// sample is the shape of observe's Sample that the test reads back;
// rundir does not import observe.
type sample struct {
	TS     float64            `json:"t_s"`
	Source string             `json:"source"`
	Values map[string]float64 `json:"values"`
}
