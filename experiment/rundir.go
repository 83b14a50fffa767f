package experiment

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"
)

// The files of a run directory (DESIGN.md, "The run directory").
const (
	PlanFile    = "plan.yaml"
	EnvFile     = "env.json"
	RecordsFile = "records.jsonl"
	SeriesFile  = "series.jsonl"
	EventsFile  = "events.jsonl"
	SummaryFile = "summary.json"
	// CompareFile is a comparison with a baseline run, left by
	// `inferload compare --embed` and shown in report.html.
	CompareFile = "compare.json"
	ReportFile  = "report.html"
)

// makeRunDir creates runs/<UTC time>-<name>, adding a counter if a run of
// the same name started in the same second.
func makeRunDir(parent, name string, started time.Time) (string, error) {
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return "", fmt.Errorf("creating output directory: %w", err)
	}
	base := started.UTC().Format("20060102T150405Z") + "-" + name
	for i := 0; i < 100; i++ {
		dir := filepath.Join(parent, base)
		if i > 0 {
			dir = fmt.Sprintf("%s.%d", dir, i)
		}
		err := os.Mkdir(dir, 0o755)
		if err == nil {
			return dir, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return "", fmt.Errorf("creating run directory: %w", err)
		}
	}
	return "", fmt.Errorf("creating run directory: too many runs named %q in one second", name)
}
