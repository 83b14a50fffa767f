package experiment

import (
	"sync"
	"testing"

	"github.com/inferload/inferload/internal/enginetest"
	"github.com/inferload/inferload/sim"
)

// truthLog is the simulator's exact per-request timings (sim.Config's
// OnFinish), keyed by the x-request-id inferload sent. The hook runs on
// the simulator's goroutines while the test reads, hence the lock.
type truthLog struct {
	mu sync.Mutex
	m  map[string]sim.Truth
}

func (l *truthLog) add(id string, tr sim.Truth) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.m[id] = tr
}

// get is the truth for x-request-id id, if the simulator served it.
func (l *truthLog) get(id string) (sim.Truth, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	tr, ok := l.m[id]
	return tr, ok
}

// queuingSim starts the "tiny" profile with 2 slots, so that a load of
// more users queues and the truth has a queue time, for the test's
// duration; cfg carries the rest (OTLP export). It returns the OpenAI base
// URL and the truth the simulator reports.
func queuingSim(t *testing.T, cfg sim.Config) (string, *truthLog) {
	t.Helper()
	log := &truthLog{m: map[string]sim.Truth{}}
	cfg.Profile = enginetest.TinyProfile(t)
	cfg.Profile.MaxNumSeqs = 2
	cfg.Seed = 1
	cfg.OnFinish = log.add
	_, url := enginetest.StartSim(t, cfg)
	return url, log
}
