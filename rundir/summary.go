package rundir

import (
	"encoding/json"
	"fmt"
	"io"
	"os"

	"github.com/inferload/inferload/record"
)

// WriteSummary writes s to path atomically (a temporary file renamed over
// path), so a reader never sees half a summary.
func WriteSummary(path string, s *record.Summary) error {
	return WriteFileAtomic(path, func(w io.Writer) error { return record.EncodeSummary(w, s) })
}

// ReadSummary reads a summary.json. A schema version newer than this build
// understands is an error rather than a silent misreading.
func ReadSummary(path string) (*record.Summary, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read summary: %w", err)
	}
	var s record.Summary
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("read summary %s: %w", path, err)
	}
	if s.SchemaVersion < 1 || s.SchemaVersion > record.SchemaVersion {
		return nil, fmt.Errorf("read summary %s: schema_version %d is not supported (this build reads 1 to %d)",
			path, s.SchemaVersion, record.SchemaVersion)
	}
	return &s, nil
}
