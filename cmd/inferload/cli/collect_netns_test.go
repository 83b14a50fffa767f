//go:build linux

package cli

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/inferload/inferload/record"
	"github.com/inferload/inferload/rundir"
	"github.com/inferload/inferload/schedule"
	"github.com/inferload/inferload/sim"
)

// netLab is a small network of namespaces: a hub namespace holding a
// bridge, and member namespaces joined to it by veth pairs, each with its
// own address on 10.77.0.0/24. Nothing is joined to the host's network:
// traffic stays inside the namespaces the test made.
type netLab struct {
	t      *testing.T
	prefix string // unique per test run: il + 6 hex digits
	hub    string
	n      int
}

// newNetLab makes the hub, or fails the test when namespaces cannot be
// made (not root, no iproute2): scripts/install-test-deps.sh installs
// iproute2, and the cluster claim is only proven across namespaces.
func newNetLab(t *testing.T) *netLab {
	t.Helper()
	b := make([]byte, 3)
	_, _ = rand.Read(b)
	l := &netLab{t: t, prefix: "il" + hex.EncodeToString(b)}
	l.hub = l.prefix + "-hub"
	if out, err := exec.Command("ip", "netns", "add", l.hub).CombinedOutput(); err != nil {
		t.Fatalf("cannot create network namespaces (needs root and iproute2, which scripts/install-test-deps.sh installs): ip netns add: %v: %s", err, out)
	}
	t.Cleanup(func() { l.del(l.hub) })
	l.ip("-n", l.hub, "link", "add", "br0", "type", "bridge")
	l.ip("-n", l.hub, "link", "set", "br0", "up")
	return l
}

// ip runs ip with args, failing the test on an error.
func (l *netLab) ip(args ...string) {
	l.t.Helper()
	if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
		l.t.Fatalf("ip %s: %v: %s", strings.Join(args, " "), err, out)
	}
}

func (l *netLab) del(ns string) {
	if out, err := exec.Command("ip", "netns", "del", ns).CombinedOutput(); err != nil {
		l.t.Errorf("cleaning up: ip netns del %s: %v: %s", ns, err, out)
	}
}

// member adds a namespace joined to the hub and returns its name and
// address.
func (l *netLab) member(role string) (ns, addr string) {
	l.t.Helper()
	l.n++
	ns, addr = fmt.Sprintf("%s-%s", l.prefix, role), fmt.Sprintf("10.77.0.%d", l.n+1)
	l.ip("netns", "add", ns)
	l.t.Cleanup(func() { l.del(ns) })
	hubEnd, end := fmt.Sprintf("%sh%d", l.prefix, l.n), fmt.Sprintf("%sm%d", l.prefix, l.n)
	l.ip("link", "add", hubEnd, "netns", l.hub, "type", "veth", "peer", "name", end, "netns", ns)
	l.ip("-n", l.hub, "link", "set", hubEnd, "master", "br0", "up")
	l.ip("-n", ns, "addr", "add", addr+"/24", "dev", end)
	l.ip("-n", ns, "link", "set", end, "up")
	l.ip("-n", ns, "link", "set", "lo", "up")
	return ns, addr
}

// exec is the command prefix that runs a program in ns.
func (l *netLab) exec(ns string) []string { return []string{"ip", "netns", "exec", ns} }

// listenIn opens a TCP listener inside ns: the socket is made on a thread
// moved into ns, which is never moved back (its goroutine ends locked, so
// the runtime drops the thread).
func listenIn(t *testing.T, ns, addr string) net.Listener {
	t.Helper()
	type result struct {
		l   net.Listener
		err error
	}
	ch := make(chan result, 1)
	go func() {
		runtime.LockOSThread()
		f, err := os.Open("/var/run/netns/" + ns)
		if err != nil {
			ch <- result{err: err}
			return
		}
		defer f.Close()
		if err := unix.Setns(int(f.Fd()), unix.CLONE_NEWNET); err != nil {
			ch <- result{err: fmt.Errorf("setns %s: %w", ns, err)}
			return
		}
		l, err := net.Listen("tcp", addr)
		ch <- result{l, err}
	}()
	r := <-ch
	if r.err != nil {
		t.Fatal(r.err)
	}
	t.Cleanup(func() { r.l.Close() })
	return r.l
}

// perSource counts the generation requests the simulator finished, by
// the client's address: each segment has its own.
type perSource struct {
	mu sync.Mutex
	n  map[string]int
}

func (c *perSource) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(w, r)
		if strings.HasSuffix(r.URL.Path, "/completions") {
			host, _, _ := net.SplitHostPort(r.RemoteAddr)
			c.mu.Lock()
			c.n[host]++
			c.mu.Unlock()
		}
	})
}

// TestCollectAcrossNamespaces runs a distributed run as a cluster would:
// the simulator, a collector and three segments, each in its own network
// namespace with its own address, the segments sending the collector's
// token (it listens beyond loopback). Segment 2 is SIGKILLed mid-run.
// Then: each surviving segment's records are exactly the requests the
// simulator served to its address, and what the collector gathered; the
// merged records are the segments' together; every record's intended
// arrival is the single-process schedule's for the same seed and its
// run-wide number, and before the kill the union is that whole schedule;
// the merged percentiles are those of all the segments' records in one
// aggregate; the killed segment lost at most about a second, the run is
// marked killed, and the threshold on the merged data (which each segment
// alone passes) sets the collector's exit code.
func TestCollectAcrossNamespaces(t *testing.T) {
	t.Parallel()
	lab := newNetLab(t)
	simNS, simAddr := lab.member("sim")
	colNS, colAddr := lab.member("col")
	segNS, segAddr := make([]string, 3), make([]string, 3)
	for i := range 3 {
		segNS[i], segAddr[i] = lab.member(fmt.Sprint("s", i))
	}

	s, err := sim.New(sim.Config{Seed: 1, Speedup: 20})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	served := &perSource{n: map[string]int{}}
	srv := &http.Server{Handler: served.wrap(s.Handler()), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(listenIn(t, simNS, simAddr+":8000")) }()
	t.Cleanup(func() { srv.Close() })

	work := t.TempDir()
	const token = "netns-token-51c2"
	tokenFile := filepath.Join(work, "token")
	planFile := filepath.Join(work, "plan.yaml")
	// 150 requests/s for 6 s: about 900 arrivals, 300 a segment, each
	// recorded (failed or not); "at most 600 requests" fails only on the
	// merged data, even with segment 2 killed after its 200th record.
	const rate, seed = 150.0, 7
	plan := fmt.Sprintf(`name: netns
target: {url: "http://%s:8000/v1"}
load: {rate: %g, arrival: poisson, duration: 6s}
workload: {input_tokens: "16", output_tokens: "8", seed: %d}
observe: {gpu: false, scrape: "off"}
thresholds: ["requests.total <= 600"]
`, simAddr, rate, seed)
	for path, body := range map[string]string{tokenFile: token, planFile: plan} {
		if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	addrFile := filepath.Join(work, "addr")
	collector, colOut := startChildVia(t, lab.exec(colNS), nil, "collect", "--listen", colAddr+":8089", "--addr-file", addrFile,
		"--segments", "3", "--token-file", tokenFile, "--dir", filepath.Join(work, "gathered"), "--out", filepath.Join(work, "merged"),
		"--segment-timeout", "3s", "-o", "json", "-q")
	url := "http://" + strings.TrimSpace(string(waitForPath(t, addrFile)))
	shards := make([]*exec.Cmd, 3)
	for i := range 3 {
		shards[i], _ = startChildVia(t, lab.exec(segNS[i]), []string{"INFERLOAD_COLLECTOR_TOKEN=" + token}, "run", "-f", planFile,
			"--segment", fmt.Sprintf("%d/3", i), "--no-preflight", "--collector", url, "--out", filepath.Join(work, fmt.Sprint("shard-", i)), "-q")
	}
	gathered := func(i int) string { return filepath.Join(work, "gathered", fmt.Sprint("segment-", i), rundir.Records) }
	killed := waitForFile(t, filepath.Join(work, "shard-2"), rundir.Records, func(b []byte) bool { return recordLines(b) >= 200 })
	waitForPath(t, gathered(2))
	if err := shards[2].Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	killedAt := time.Now()
	for _, sh := range shards[:2] {
		if err := sh.Wait(); err != nil {
			t.Errorf("segment exit: %v", err)
		}
	}
	_ = shards[2].Wait()
	err = collector.Wait()
	if code := collector.ProcessState.ExitCode(); code != ExitThresholds {
		t.Fatalf("collector exit %d (%v), want %d from the merged threshold", code, err, ExitThresholds)
	}
	var sum record.Summary
	if err := json.Unmarshal(colOut.Bytes(), &sum); err != nil {
		t.Fatalf("collector output: %v\n%s", err, colOut.String())
	}
	if !sum.Interrupted || len(sum.Thresholds) != 1 || sum.Thresholds[0].Passed {
		t.Errorf("merged interrupted %v, thresholds %+v: want a killed run whose threshold failed", sum.Interrupted, sum.Thresholds)
	}

	// Counts: each surviving segment = what the simulator served it =
	// what the collector gathered; merged = the segments together.
	bySeg := make([][]*record.Result, 3)
	var total int
	for i := range 2 {
		local := readRecords(t, filepath.Join(runDirIn(t, filepath.Join(work, fmt.Sprint("shard-", i))), rundir.Records))
		bySeg[i] = readRecords(t, gathered(i))
		served.mu.Lock()
		atSim := served.n[segAddr[i]]
		served.mu.Unlock()
		if len(local) != atSim || len(bySeg[i]) != len(local) || len(local) == 0 {
			t.Errorf("segment %d/3: %d records, the collector %d, the simulator served its address %d: want all equal", i, len(local), len(bySeg[i]), atSim)
		}
	}
	local2, got2 := checkLostTail(t, filepath.Join(killed, rundir.Records), gathered(2), killedAt)
	bySeg[2] = got2
	served.mu.Lock()
	if n := served.n[segAddr[2]]; n < len(local2) {
		t.Errorf("the killed segment wrote %d records but the simulator served its address only %d", len(local2), n)
	}
	served.mu.Unlock()
	for _, rs := range bySeg {
		total += len(rs)
	}
	merged := readRecords(t, filepath.Join(runDirIn(t, filepath.Join(work, "merged")), rundir.Records))
	if len(merged) != total || sum.Requests.Total != int64(total) {
		t.Errorf("merged %d records, summary %d requests; the segments sent %d", len(merged), sum.Requests.Total, total)
	}
	checkArrivals(t, bySeg, rate, seed)
	checkTraceIDs(t, runDirIn(t, filepath.Join(work, "merged")), merged)

	// Percentiles: the merged summary's are those of all the records in
	// one aggregate.
	agg := record.NewAggregate()
	for _, rs := range bySeg {
		for _, r := range rs {
			agg.Add(r)
		}
	}
	want := agg.Summary(record.RunInfo{}).Metrics
	for name, pair := range map[string][2]record.Stats{"ttft": {sum.Metrics.TTFT, want.TTFT}, "e2e": {sum.Metrics.E2E, want.E2E}, "itl": {sum.Metrics.ITL, want.ITL}} {
		g, w := pair[0], pair[1]
		if g.P50 != w.P50 || g.P90 != w.P90 || g.P99 != w.P99 || g.Count != w.Count || w.Count == 0 {
			t.Errorf("%s: merged P50/P90/P99 %v/%v/%v over %d, all records together %v/%v/%v over %d", name, g.P50, g.P90, g.P99, g.Count, w.P50, w.P90, w.P99, w.Count)
		}
	}
}

// checkArrivals: every open-loop record's intended arrival is the
// single-process schedule's arrival of its run-wide number, which is the
// segment's own (every Count-th from its index); up to the
// killed segment's last recorded arrival less a second (requests then
// in flight, a few milliseconds long here, may be lost with it), the union is the whole schedule, each
// arrival once.
func checkArrivals(t *testing.T, bySeg [][]*record.Result, rate float64, seed uint64) {
	t.Helper()
	all, err := schedule.NewArrivals(schedule.Poisson, rate, 0, seed)
	if err != nil {
		t.Fatal(err)
	}
	var at []int64
	arrival := func(k uint64) int64 {
		for uint64(len(at)) <= k {
			at = append(at, all.Next().Microseconds())
		}
		return at[k]
	}
	var cut int64
	for _, r := range bySeg[2] {
		cut = max(cut, r.IntendedUS)
	}
	cut -= 1_000_000
	seen := map[uint64]int{}
	for i, rs := range bySeg {
		for _, r := range rs {
			// Records carry their run-wide number: a segment's are
			// every Count-th, from its index.
			k := r.ID
			if k%uint64(len(bySeg)) != uint64(i) || !r.OpenLoop || r.IntendedUS != arrival(k) {
				t.Fatalf("segment %d/%d request %d: intended %d µs, the single-process schedule's arrival %d is at %d µs", i, len(bySeg), k, r.IntendedUS, k, arrival(k))
			}
			seen[k]++
		}
	}
	var k uint64
	for ; arrival(k) < cut; k++ {
		if seen[k] != 1 {
			t.Fatalf("arrival %d at %d µs is in the segments %d times, want once", k, arrival(k), seen[k])
		}
	}
	if k < 200 {
		t.Errorf("only %d arrivals before the kill to compare", k)
	}
}

// checkTraceIDs: every merged record's trace id is recomputed from the
// merged env.json's trace_run and the record's run-wide id, and no two
// records share one.
func checkTraceIDs(t *testing.T, dir string, merged []*record.Result) {
	t.Helper()
	var env struct {
		TraceRun string `json:"trace_run"`
	}
	if err := json.Unmarshal(mustRead(t, filepath.Join(dir, "env.json")), &env); err != nil || !strings.HasPrefix(env.TraceRun, "netns@") {
		t.Fatalf("merged env.json trace_run %q (%v): want the plan's name and the common start", env.TraceRun, err)
	}
	seen := map[string]bool{}
	for _, r := range merged {
		id := record.TraceID(env.TraceRun, r.ID)
		if want := hex.EncodeToString(id[:]); r.TraceID != want || seen[want] {
			t.Fatalf("request %d: trace id %q, recomputed %q (seen before: %v)", r.ID, r.TraceID, want, seen[want])
		}
		seen[r.TraceID] = true
	}
}
