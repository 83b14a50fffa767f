package summary

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/inferload/inferload/analyze"
	"github.com/inferload/inferload/record"
	"github.com/inferload/inferload/rundir"
)

// ErrNotRunDir marks a directory without records.jsonl.
var ErrNotRunDir = errors.New("not a run directory")

// LoadRunSamples reads what a comparison needs from a run directory:
// every record (measured ones for latencies and failures, all successes
// for throughput), the measured window from events.jsonl, and env.json.
// A run that was killed still loads: its window ends at the last
// completion. It needs no plan.yaml, so runs of older versions compare;
// the conversations' turns come from summary.json's sessions (a run
// without it has no session figures to compare).
func LoadRunSamples(dir string) (*analyze.RunSamples, error) {
	info, err := readWindow(dir)
	if err != nil {
		return nil, err
	}
	sum, err := readSummary(dir)
	if err != nil {
		return nil, err
	}
	rs := analyze.NewRunSamples(filepath.Base(filepath.Clean(dir)))
	rs.SetSessionTurns(sessionTurnsOf(sum))
	rs.SessionGoodput, rs.TaskGoodput = sessionGoodputOf(sum), taskGoodputOf(sum)
	_, err = rundir.ReadRecords(rundir.RecordsFile(dir), func(r *record.Result) error {
		rs.Add(r)
		return nil
	})
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%s: %w (no %s or %s)", dir, ErrNotRunDir, rundir.Records, rundir.RecordsPlain)
	}
	if err != nil {
		return nil, fmt.Errorf("reading records of %s: %w", dir, err)
	}
	if rs.Records() == 0 {
		return nil, fmt.Errorf("%s: no records to compare (was the run stopped before any request finished?)", dir)
	}
	rs.Close(info)
	if rs.Env, err = readEnv(dir); err != nil {
		return nil, err
	}
	rs.NotValid = notValidOf(sum)
	return rs, nil
}

// sessionGoodputOf is each conversational class's session goodput as the
// summary counted it: Met of its completed and failed conversations, each
// call judged by the class's SLO (classes.<class>.goodput.slo, the
// objective the aggregate judged its requests, and so its sessions, by).
func sessionGoodputOf(s *record.Summary) map[string]analyze.GoodputShare {
	if s == nil || len(s.Sessions) == 0 {
		return nil
	}
	out := make(map[string]analyze.GoodputShare, len(s.Sessions))
	for name, ss := range s.Sessions {
		var slo record.SLO
		if b := s.Classes[name]; b != nil {
			slo = b.Goodput.SLO
		}
		out[name] = analyze.GoodputShare{SLO: slo, Met: ss.Goodput.Met, Total: ss.Completed + ss.Failed}
	}
	return out
}

// taskGoodputOf is each chain or graph class's task goodput as the
// summary counted it: Met of its measured tasks, judged by the SLO it
// names; classes without one (no goodput) are left out.
func taskGoodputOf(s *record.Summary) map[string]analyze.GoodputShare {
	if s == nil {
		return nil
	}
	var out map[string]analyze.GoodputShare
	for name, cs := range s.Chains {
		if cs.Goodput == nil {
			continue
		}
		if out == nil {
			out = map[string]analyze.GoodputShare{}
		}
		out[name] = analyze.GoodputShare{SLO: cs.Goodput.SLO, Met: cs.Goodput.Met, Total: cs.Chains}
	}
	return out
}

// readSummary reads the run's summary.json; nil without error when it has
// none (a killed run: compare still loads it).
func readSummary(dir string) (*record.Summary, error) {
	s, err := rundir.ReadSummary(filepath.Join(dir, rundir.Summary))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	return s, err
}

// notValidOf is the run's validity reasons when its summary judged it NOT
// VALID; nil when valid, without a verdict or without a summary.
func notValidOf(s *record.Summary) []string {
	if s == nil {
		return nil
	}
	if v := s.Validity; v != nil && !v.Valid {
		if len(v.Reasons) == 0 {
			return []string{"its validity verdict is NOT VALID"}
		}
		return v.Reasons
	}
	return nil
}

// sessionTurnsOf is each conversational class's turns per conversation,
// as the run's summary recorded them; nil without a summary.
func sessionTurnsOf(s *record.Summary) map[string]int {
	if s == nil || len(s.Sessions) == 0 {
		return nil
	}
	turns := make(map[string]int, len(s.Sessions))
	for name, ss := range s.Sessions {
		turns[name] = ss.Turns
	}
	return turns
}

// readWindow reads the run's clock marks from events.jsonl; a missing
// file means no warm-up and an unknown end.
func readWindow(dir string) (record.RunInfo, error) {
	var info record.RunInfo
	_, err := rundir.ReadEvents(filepath.Join(dir, rundir.Events), func(e *record.Event) error {
		info.Apply(e)
		return nil
	})
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return info, fmt.Errorf("reading events of %s: %w", dir, err)
	}
	return info, nil
}

// readEnv decodes env.json; nil without error when the run has none.
func readEnv(dir string) (map[string]any, error) {
	raw, err := os.ReadFile(filepath.Join(dir, rundir.Env))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", rundir.Env, err)
	}
	var env map[string]any
	if err := json.Unmarshal(raw, &env); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, rundir.Env), err)
	}
	return env, nil
}
