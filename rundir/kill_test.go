package rundir

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/inferload/inferload/record"
)

const killChildEnv = "RECORD_TEST_KILL_CHILD"

// TestWriterSurvivesSIGKILL runs a child process that writes records as
// fast as it can and reports each background flush; once a flush of many
// records is reported the child is killed with SIGKILL. Every record
// flushed before the kill must read back, a cut-short last line is
// tolerated, and nothing is corrupt. Both forms: a plain file and a
// compressed one, whose flushes end frames.
func TestWriterSurvivesSIGKILL(t *testing.T) {
	if path := os.Getenv(killChildEnv); path != "" {
		writeUntilKilled(path)
		return
	}
	t.Parallel()
	for _, name := range []string{RecordsPlain, Records} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			killMidRun(t, filepath.Join(t.TempDir(), name))
		})
	}
}

func killMidRun(t *testing.T, path string) {
	cmd := exec.Command(os.Args[0], "-test.run=^TestWriterSurvivesSIGKILL$")
	cmd.Env = append(os.Environ(), killChildEnv+"="+path)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	flushed := waitForFlushes(t, stdout, 500)
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait() // "signal: killed" is the point
	st, err := ReadRecords(path, func(*record.Result) error { return nil })
	if err != nil {
		t.Fatalf("records after SIGKILL: %v", err)
	}
	if st.Values < flushed {
		t.Errorf("read %d records, but %d were flushed before the kill", st.Values, flushed)
	}
}

// waitForFlushes reads the child's "flushed N" lines until N ≥ atLeast.
func waitForFlushes(t *testing.T, r interface{ Read([]byte) (int, error) }, atLeast int) int {
	t.Helper()
	got := make(chan int, 1)
	go func() {
		sc := bufio.NewScanner(r)
		for sc.Scan() {
			n, err := strconv.Atoi(strings.TrimPrefix(sc.Text(), "flushed "))
			if err == nil && n >= atLeast {
				got <- n
				break
			}
		}
		close(got)
	}()
	select {
	case n, ok := <-got:
		if !ok {
			t.Fatal("child exited before flushing")
		}
		return n
	case <-time.After(20 * time.Second):
		t.Fatal("child did not flush in time")
		return 0
	}
}

// writeUntilKilled is the child: large records, flushed every 20 ms, each
// flush reported with the number of records written before it. The hook
// runs with the writer's lock held, so the count and the flush agree.
func writeUntilKilled(path string) {
	written := 0 // guarded by w.mu
	w, err := newJSONLWriter(path, 20*time.Millisecond, func() { fmt.Printf("flushed %d\n", written) })
	if err != nil {
		os.Exit(2)
	}
	r := benchResult()
	deadline := time.Now().Add(30 * time.Second) // never outlive a lost parent
	for id := uint64(1); time.Now().Before(deadline); id++ {
		r.ID = id
		if err := w.Write(r); err != nil {
			os.Exit(3)
		}
		w.mu.Lock()
		written++
		w.mu.Unlock()
	}
	os.Exit(4)
}
