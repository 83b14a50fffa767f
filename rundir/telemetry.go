package rundir

import (
	"errors"
	"fmt"
	"io/fs"
)

// ReadTelemetry reads a telemetry.jsonl into samples of type S (observe's
// Sample), with the same tolerance and errors as ReadRecords. A missing
// file is no samples: the run had telemetry off. The sample type is the
// caller's so that the run directory's format knows nothing of what the
// samples mean (DESIGN.md: rundir does not know observe).
func ReadTelemetry[S any](path string) ([]S, error) {
	var out []S
	_, err := readJSONL(path, func(s *S) error {
		out = append(out, *s)
		return nil
	})
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading telemetry: %w", err)
	}
	return out, nil
}
