package rundir

import (
	"errors"
	"fmt"
	"io/fs"

	"github.com/inferload/inferload/observe"
)

// ReadTelemetry reads a telemetry.jsonl, with the same tolerance and
// errors as ReadRecords. A missing file is no samples: the run had
// telemetry off.
func ReadTelemetry(path string) ([]observe.Sample, error) {
	var out []observe.Sample
	_, err := readJSONL(path, func(s *observe.Sample) error {
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
