package experiment

import (
	"path/filepath"

	"github.com/inferload/inferload/record"
)

// keepExperiment carries a staged run's, sweep's, capacity search's or
// soak's sections over from the summary.json being replaced: they rest on
// figures the records alone do not hold (each stage's achieved load, the
// order of a search's probes), so a rebuild must not drop them. A missing
// or damaged summary.json (what a rebuild is for) carries nothing.
func keepExperiment(dir string, s *record.Summary) {
	old, err := record.ReadSummary(filepath.Join(dir, SummaryFile))
	if err != nil {
		return
	}
	s.Steps, s.Knee, s.Capacity, s.Soak = old.Steps, old.Knee, old.Capacity, old.Soak
}
