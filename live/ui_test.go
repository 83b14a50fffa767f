package live

import (
	"bufio"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/inferload/inferload/observe"
	"github.com/inferload/inferload/record"
)

// fakeControl records what the API asked of it.
type fakeControl struct {
	mu      sync.Mutex
	level   float64
	stopped bool
	aborted bool
	paused  bool
	notes   []string
	fixed   string
	max     float64
}

func (c *fakeControl) Stop()  { c.mu.Lock(); c.stopped = true; c.mu.Unlock() }
func (c *fakeControl) Abort() { c.mu.Lock(); c.aborted = true; c.mu.Unlock() }
func (c *fakeControl) SetLoad(l float64) error {
	if l > 100 {
		return errors.New("too many")
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.level = l
	return nil
}
func (c *fakeControl) Pause() error  { c.mu.Lock(); c.paused = true; c.mu.Unlock(); return nil }
func (c *fakeControl) Resume() error { c.mu.Lock(); c.paused = false; c.mu.Unlock(); return nil }
func (c *fakeControl) Note(text string) (record.Event, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.notes = append(c.notes, text)
	return record.Event{TimeUS: 1500000, Kind: record.EventNote, Message: text}, nil
}
func (c *fakeControl) Load() LoadState {
	c.mu.Lock()
	defer c.mu.Unlock()
	return LoadState{Steerable: c.fixed == "", Mode: record.ModeClosed, Level: c.level, Paused: c.paused, Stopping: c.stopped, Fixed: c.fixed, MaxLevel: c.max}
}

func startUI(t *testing.T, o UIOptions) (*UIServer, *fakeControl, *Monitor) {
	t.Helper()
	ctl := &fakeControl{level: 2}
	mon := NewMonitor(MonitorOptions{})
	mon.Start("runs/x", time.Minute)
	srv, err := ServeUI("127.0.0.1:0", mon, ctl, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := srv.Close(); err != nil {
			t.Error(err)
		}
	})
	return srv, ctl, mon
}

// bearer is the header that carries srv's token.
func bearer(srv *UIServer) map[string]string {
	return map[string]string{"Authorization": "Bearer " + srv.Token()}
}

// do sends one request; body, when set, is JSON.
func do(t *testing.T, method, url, body string, header map[string]string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var b strings.Builder
	_, _ = bufio.NewReader(resp.Body).WriteTo(&b)
	return resp, b.String()
}

// TestUIAPI: each endpoint does what docs/live.md says, and changes show
// as events on the page's state.
func TestUIAPI(t *testing.T) {
	t.Parallel()
	srv, ctl, _ := startUI(t, UIOptions{})
	base := "http://" + srv.Addr()
	tests := []struct {
		name, method, path, body string
		code                     int
		want                     string // in the reply
	}{
		// The page and its assets are served from the binary, no CDN.
		{"page", "GET", "/", "", 200, `src="assets/uPlot.iife.min.js"`},
		{"chart library", "GET", "/assets/uPlot.iife.min.js", "", 200, "uPlot"},
		// The script that takes the token out of the address bar, shared
		// with the launcher's page.
		{"token script", "GET", "/assets/token.js", "", 200, "history.replaceState"},
		{"unknown asset", "GET", "/assets/nope.js", "", 404, ""},
		// A load change is applied and answered with the new load.
		{"load", "POST", "/api/load", `{"level": 8}`, 200, `"level":8`},
		// A refused change says why.
		{"load refused", "POST", "/api/load", `{"level": 1000}`, 409, "too many"},
		{"load without level", "POST", "/api/load", `{}`, 400, "level"},
		{"load bad json", "POST", "/api/load", `{"level": "x"}`, 400, "JSON"},
		{"load unknown field", "POST", "/api/load", `{"users": 3}`, 400, "unknown field"},
		{"note", "POST", "/api/note", `{"text": "OOM in the server log"}`, 200, `"kind":"note"`},
		{"note too long", "POST", "/api/note", `{"text": "` + strings.Repeat("x", 2001) + `"}`, 400, "at most"},
		{"pause", "POST", "/api/pause", `{}`, 200, `"paused":true`},
		{"resume", "POST", "/api/resume", `{}`, 200, `"paused":false`},
		{"state", "GET", "/api/state", "", 200, `"dir":"runs/x"`},
		// With the token the page's controls are on.
		{"state with the token", "GET", "/api/state", "", 200, `"locked":false`},
		{"stop", "POST", "/api/stop", `{}`, 202, `"stopping":true`},
	}
	for _, tt := range tests {
		resp, body := do(t, tt.method, base+tt.path, tt.body, bearer(srv))
		if resp.StatusCode != tt.code || !strings.Contains(body, tt.want) {
			t.Errorf("%s: %d %.200q, want %d containing %q", tt.name, resp.StatusCode, body, tt.code, tt.want)
		}
	}
	if !ctl.stopped || ctl.level != 8 || len(ctl.notes) != 1 {
		t.Errorf("control saw stopped=%v level=%v notes=%q", ctl.stopped, ctl.level, ctl.notes)
	}
	_, body := do(t, "GET", base+"/api/state", "", nil)
	var st State
	if err := json.Unmarshal([]byte(body), &st); err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, e := range st.Events {
		kinds = append(kinds, e.Kind+": "+e.Message)
	}
	want := "[load: users 2 → 8 note: OOM in the server log load: paused load: resumed stop: stop requested from the UI]"
	if got := strings.Join(kinds, " "); "["+got+"]" != want {
		t.Errorf("events %s, want %s", got, want)
	}
	if st.Events[1].T != 1.5 {
		t.Errorf("note at %v s, want the run clock's 1.5 s from the event", st.Events[1].T)
	}
}

// TestUIRefusesCrossSiteAndRebinding: a change needs the token, and
// even with it a POST must be JSON from this origin, so neither a
// DNS-rebinding page nor a cross-site form can reach the run.
func TestUIRefusesCrossSiteAndRebinding(t *testing.T) {
	t.Parallel()
	srv, ctl, _ := startUI(t, UIOptions{})
	base := "http://" + srv.Addr()
	auth := "Bearer " + srv.Token()
	tests := []struct {
		name   string
		header map[string]string
		body   string
		ctype  string
		code   int
	}{
		// A rebinding attack arrives with the attacker's host name, and
		// without the token, which only the user's own page holds.
		{"foreign host", map[string]string{"Host": "evil.example:8089"}, `{}`, "application/json", 401},
		// A page elsewhere posting with fetch carries its Origin.
		{"foreign origin", map[string]string{"Origin": "http://evil.example", "Authorization": auth}, `{}`, "application/json", 403},
		// A plain HTML form can only send form or text bodies.
		{"form body", map[string]string{"Authorization": auth}, "a=1", "application/x-www-form-urlencoded", 415},
		// The page itself: same origin, JSON, the token.
		{"same origin", map[string]string{"Origin": base, "Authorization": auth}, `{}`, "application/json", 202},
	}
	for _, tt := range tests {
		req, _ := http.NewRequest("POST", base+"/api/stop", strings.NewReader(tt.body))
		req.Header.Set("Content-Type", tt.ctype)
		for k, v := range tt.header {
			req.Header.Set(k, v)
		}
		if h, ok := tt.header["Host"]; ok {
			req.Host = h
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tt.code {
			t.Errorf("%s: %d, want %d", tt.name, resp.StatusCode, tt.code)
		}
	}
	if !ctl.stopped {
		t.Error("the same-origin stop did not reach the run")
	}
}

// TestUIToken: on loopback too, every change needs the token (it
// needed none there: any local user could steer or stop the run); the
// page and its figures are open without it, read-only, with the state
// saying so; ?token= sets an HttpOnly cookie the page's own requests
// carry, and beats a stale one.
func TestUIToken(t *testing.T) {
	t.Parallel()
	srv, ctl, mon := startUI(t, UIOptions{Token: "s3cret"})
	base := "http://" + srv.Addr()
	if !strings.HasSuffix(srv.URL(), "/?token=s3cret") {
		t.Errorf("URL %s does not carry the token", srv.URL())
	}
	cookie := tokenCookie + srv.Addr()[strings.LastIndex(srv.Addr(), ":")+1:]
	for _, tt := range []struct {
		name, method, path, body string
		header                   map[string]string
		code                     int
		want                     string
	}{
		// Without the token no change reaches the run: 401 with a JSON
		// error saying where the token is.
		{"load, no token", "POST", "/api/load", `{"level": 9}`, nil, 401, `{"error":"a token is required: open the URL inferload printed`},
		{"stop, no token", "POST", "/api/stop", `{}`, nil, 401, `"error"`},
		{"abort, no token", "POST", "/api/abort", `{}`, nil, 401, `"error"`},
		{"pause, no token", "POST", "/api/pause", `{}`, nil, 401, `"error"`},
		{"resume, no token", "POST", "/api/resume", ``, nil, 401, `"error"`},
		{"note, no token", "POST", "/api/note", `{"text": "x"}`, nil, 401, `"error"`},
		{"load, wrong token", "POST", "/api/load", `{"level": 9}`, map[string]string{"Authorization": "Bearer wrong"}, 401, "not this server's"},
		{"load, stale cookie", "POST", "/api/load", `{"level": 9}`, map[string]string{"Cookie": cookie + "=old"}, 401, "not this server's"},
		// The page, its assets and its figures are open, locked.
		{"page, no token", "GET", "/", "", nil, 200, `id="locked-msg"`},
		{"asset, no token", "GET", "/assets/live.js", "", nil, 200, "s.locked"},
		{"state, no token", "GET", "/api/state", "", nil, 200, `"locked":true`},
		{"state, wrong token", "GET", "/api/state?token=wrong", "", nil, 200, `"locked":true`},
		{"state, stale cookie", "GET", "/api/state", "", map[string]string{"Cookie": cookie + "=old"}, 200, `"locked":true`},
		// With the token: unlocked, and changes go through.
		{"state, bearer", "GET", "/api/state", "", map[string]string{"Authorization": "Bearer s3cret"}, 200, `"locked":false`},
		{"state, cookie", "GET", "/api/state", "", map[string]string{"Cookie": cookie + "=s3cret"}, 200, `"locked":false`},
		{"load, bearer", "POST", "/api/load", `{"level": 7}`, map[string]string{"Authorization": "Bearer s3cret"}, 200, `"level":7`},
		{"note, cookie", "POST", "/api/note", `{"text": "by cookie"}`, map[string]string{"Cookie": cookie + "=s3cret"}, 200, `"kind":"note"`},
	} {
		resp, body := do(t, tt.method, base+tt.path, tt.body, tt.header)
		if resp.StatusCode != tt.code || !strings.Contains(body, tt.want) {
			t.Errorf("%s: %d %.200s, want %d with %q", tt.name, resp.StatusCode, body, tt.code, tt.want)
		}
		if resp.StatusCode == 401 && !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
			t.Errorf("%s: 401 as %q, want JSON", tt.name, resp.Header.Get("Content-Type"))
		}
	}
	ctl.mu.Lock()
	if ctl.level != 7 || ctl.stopped || ctl.aborted || ctl.paused || len(ctl.notes) != 1 {
		t.Errorf("control saw level %g stopped %v aborted %v paused %v notes %q: only the token's load and note should reach it",
			ctl.level, ctl.stopped, ctl.aborted, ctl.paused, ctl.notes)
	}
	ctl.mu.Unlock()
	if n := len(mon.View(0, 0).Events); n != 2 {
		t.Errorf("%d events, want 2 (the load and the note sent with the token)", n)
	}

	// The printed URL sets the cookie, and replaces a stale one.
	for _, stale := range []map[string]string{nil, {"Cookie": cookie + "=old"}} {
		resp, body := do(t, "GET", base+"/?token=s3cret", "", stale)
		var set *http.Cookie
		for _, c := range resp.Cookies() {
			if c.Name == cookie {
				set = c
			}
		}
		if resp.StatusCode != 200 || set == nil || set.Value != "s3cret" || !set.HttpOnly || set.SameSite != http.SameSiteStrictMode {
			t.Errorf("page with ?token= (sent %v): %d, cookie %+v", stale, resp.StatusCode, set)
		}
		if strings.Contains(body, "s3cret") {
			t.Error("the token reached the page's text")
		}
	}
}

// TestUITokenCookiePerPort: two UIs on 127.0.0.1 name their cookies by
// their ports (one name for all: the second page opened replaced the
// first's cookie, and the first page was locked).
func TestUITokenCookiePerPort(t *testing.T) {
	t.Parallel()
	names := map[string]bool{}
	for range 2 {
		srv, _, _ := startUI(t, UIOptions{})
		resp, _ := do(t, "GET", srv.URL(), "", nil)
		cs := resp.Cookies()
		if len(cs) != 1 || !strings.HasSuffix(cs[0].Name, srv.Addr()[strings.LastIndex(srv.Addr(), ":")+1:]) {
			t.Fatalf("UI at %s set %v: want one cookie named for its port", srv.Addr(), cs)
		}
		names[cs[0].Name] = true
	}
	if len(names) != 2 {
		t.Errorf("cookies %v: two UIs share a name", names)
	}
}

// TestUIEventStreamLocked: the event stream is open to a reader without
// the token, and its messages say the page is locked.
func TestUIEventStreamLocked(t *testing.T) {
	t.Parallel()
	srv, _, _ := startUI(t, UIOptions{})
	for _, tt := range []struct {
		header map[string]string
		want   bool
	}{{nil, true}, {bearer(srv), false}} {
		req, _ := http.NewRequest("GET", "http://"+srv.Addr()+"/api/events", nil)
		for k, v := range tt.header {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(nil, 1<<20)
		var st State
		for sc.Scan() {
			if line, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				if err := json.Unmarshal([]byte(line), &st); err != nil {
					t.Fatal(err)
				}
				break
			}
		}
		resp.Body.Close()
		if resp.StatusCode != 200 || st.Locked != tt.want {
			t.Errorf("events with %v: %d locked %v, want 200 locked %v", tt.header, resp.StatusCode, st.Locked, tt.want)
		}
	}
}

// TestUIEventStream: each message of /api/events carries only the points
// the page has not had; Close sends the final state and ends the stream.
func TestUIEventStream(t *testing.T) {
	t.Parallel()
	now := time.Unix(1000, 0)
	var mu sync.Mutex
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	mon := NewMonitor(MonitorOptions{Now: clock})
	mon.Start("runs/x", 0)
	srv, err := ServeUI("127.0.0.1:0", mon, &fakeControl{}, UIOptions{Every: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Get("http://" + srv.Addr() + "/api/events")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	read := func() State {
		for sc.Scan() {
			if line, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				var st State
				if err := json.Unmarshal([]byte(line), &st); err != nil {
					t.Fatal(err)
				}
				return st
			}
		}
		t.Fatalf("stream ended: %v", sc.Err())
		return State{}
	}
	first := read()
	mu.Lock()
	now = now.Add(5 * time.Second) // seconds 0..3 close on the next tick
	mu.Unlock()
	var st State
	for st = read(); st.Seq < 4; st = read() {
	}
	if first.Seq != 0 || st.From != 0 || len(st.Points) != 4 {
		t.Fatalf("first seq %d; then from %d with %d points, want 4 new points", first.Seq, st.From, len(st.Points))
	}
	next := read()
	if next.From != st.Seq || len(next.Points) != 0 {
		t.Errorf("next message from %d with %d points: want from %d, no repeat", next.From, len(next.Points), st.Seq)
	}
	mon.Finish(Final{Dir: "runs/x"})
	if err := srv.Close(); err != nil {
		t.Fatal(err)
	}
	var last State
	for sc.Scan() {
		if line, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			_ = json.Unmarshal([]byte(line), &last)
		}
	}
	if last.Final == nil || last.Final.Dir != "runs/x" {
		t.Errorf("the stream's last message %+v has no final state", last.Final)
	}
}

// TestUIFixedRun: a run the page cannot steer (a distributed run's
// collector) refuses stop and abort with 409 and its reason, never
// calling them, and its state carries the segment table.
func TestUIFixedRun(t *testing.T) {
	t.Parallel()
	rows := []SegmentProgress{{Segment: "0/2", State: "running", Completed: 7, InFlight: 2, LastSeenS: 0.4, ClientCPUPct: -1}}
	srv, ctl, _ := startUI(t, UIOptions{Segments: func() []SegmentProgress { return rows }})
	ctl.mu.Lock()
	ctl.fixed = "steered elsewhere"
	ctl.mu.Unlock()
	base := "http://" + srv.Addr()
	for _, path := range []string{"/api/stop", "/api/abort"} {
		resp, body := do(t, http.MethodPost, base+path, "{}", bearer(srv))
		if resp.StatusCode != http.StatusConflict || !strings.Contains(body, "steered elsewhere") {
			t.Errorf("POST %s: %s %s, want 409 with the reason", path, resp.Status, body)
		}
	}
	ctl.mu.Lock()
	if ctl.stopped || ctl.aborted {
		t.Error("a fixed run was stopped")
	}
	ctl.mu.Unlock()
	resp, body := do(t, http.MethodGet, base+"/api/state", "", nil)
	var st State
	if err := json.Unmarshal([]byte(body), &st); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("state: %s %v", resp.Status, err)
	}
	if len(st.Segments) != 1 || st.Segments[0] != rows[0] || st.Load.Fixed != "steered elsewhere" {
		t.Errorf("state segments %+v fixed %q: want the table and the reason", st.Segments, st.Load.Fixed)
	}
}

// TestUIBodies: JSON with its charset is JSON (it was refused with 415),
// and a body over the limit is a 413 that says so (a 20 MB body was a
// 400 "unexpected EOF").
func TestUIBodies(t *testing.T) {
	t.Parallel()
	srv, ctl, _ := startUI(t, UIOptions{})
	base := "http://" + srv.Addr()
	resp, body := do(t, "POST", base+"/api/load", `{"level": 5}`, map[string]string{"Content-Type": "application/json; charset=utf-8", "Authorization": "Bearer " + srv.Token()})
	if resp.StatusCode != 200 || ctl.Load().Level != 5 {
		t.Errorf("charset=utf-8: %d %s, want 200 and level 5", resp.StatusCode, body)
	}
	huge := `{"text": "` + strings.Repeat("x", 20<<20) + `"}`
	resp, body = do(t, "POST", base+"/api/note", huge, bearer(srv))
	if resp.StatusCode != 413 || !strings.Contains(body, "body over 65536 bytes") {
		t.Errorf("20 MB note: %d %.200s, want 413 saying the body is over 65536 bytes", resp.StatusCode, body)
	}
}

// TestUIStateQuery: since and tel_since past what the run has are
// answered with nothing new (they panicked: a slice out of range), junk
// is a 400 naming the parameter, in the launcher's /live/api/state too.
func TestUIStateQuery(t *testing.T) {
	t.Parallel()
	srv, _, mon := startUI(t, UIOptions{})
	mon.Sample(observe.Sample{TimeUS: 1, Values: map[string]float64{"queue_depth": 1}})
	base := "http://" + srv.Addr()
	for _, tt := range []struct {
		query string
		code  int
		want  string
	}{
		// Past the seconds so far: nothing new, numbered from now.
		{"since=99", 200, `"seq":0,"from":0,"window":3600,"points":null`},
		{"tel_since=99", 200, `"telemetry":null,"tel_seq":1,"tel_from":1`},
		{"since=9223372036854775807&tel_since=9223372036854775807", 200, `"tel_seq":1,"tel_from":1`},
		// Not a count of seconds or samples.
		{"since=-5", 400, "since"},
		{"since=abc", 400, "since"},
		{"tel_since=1.5", 400, "tel_since"},
		// Empty is leaving it out: every point kept.
		{"tel_since=", 200, `"tel_seq":1,"tel_from":0`},
	} {
		resp, body := do(t, "GET", base+"/api/state?"+tt.query, "", nil)
		if resp.StatusCode != tt.code || !strings.Contains(body, tt.want) {
			t.Errorf("?%s: %d %.300s, want %d with %q", tt.query, resp.StatusCode, body, tt.code, tt.want)
		}
	}
}

// TestUILoadLimit: a level past the run's limit (LoadState.MaxLevel, the
// plan's own bound) is a 400 naming it, and so are levels that are no
// load at all; the control never hears them.
func TestUILoadLimit(t *testing.T) {
	t.Parallel()
	srv, ctl, _ := startUI(t, UIOptions{})
	ctl.mu.Lock()
	ctl.max = 20
	ctl.mu.Unlock()
	base := "http://" + srv.Addr()
	for _, tt := range []struct {
		body string
		code int
		want string
	}{
		{`{"level": 50}`, 400, "limit of 20 users"},
		{`{"level": 1000000}`, 400, "limit of 20 users"},
		{`{"level": 0}`, 400, "above 0"},
		{`{"level": -3}`, 400, "above 0"},
		{`{"level": 20}`, 200, `"level":20`},
	} {
		resp, body := do(t, "POST", base+"/api/load", tt.body, bearer(srv))
		if resp.StatusCode != tt.code || !strings.Contains(body, tt.want) {
			t.Errorf("%s: %d %s, want %d with %q", tt.body, resp.StatusCode, body, tt.code, tt.want)
		}
	}
	if l := ctl.Load().Level; l != 20 {
		t.Errorf("level %g, want 20: the control heard a refused level", l)
	}
}

// TestUIURLOnEveryInterface: a UI listening on every interface prints an
// address a browser can open, with its token (it printed http://[::]:P).
func TestUIURLOnEveryInterface(t *testing.T) {
	t.Parallel()
	srv, err := ServeUI("0.0.0.0:0", NewMonitor(MonitorOptions{}), &fakeControl{}, UIOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	_, port, _ := strings.Cut(srv.Addr(), "]:")
	if port == "" {
		_, port, _ = strings.Cut(srv.Addr(), ":")
	}
	if want := "http://127.0.0.1:" + port + "/?token=" + srv.Token(); srv.URL() != want || srv.ListenNote() == "" {
		t.Errorf("URL %s (note %q), want %s with a note that every interface is served", srv.URL(), srv.ListenNote(), want)
	}
	resp, _ := do(t, "GET", srv.URL(), "", nil)
	if resp.StatusCode != 200 {
		t.Errorf("the printed URL: %d", resp.StatusCode)
	}
	// Beyond loopback even reads need the token.
	if resp, _ := do(t, "GET", srv.BaseURL()+"api/state", "", nil); resp.StatusCode != 401 {
		t.Errorf("state without the token on every interface: %d, want 401", resp.StatusCode)
	}
}
