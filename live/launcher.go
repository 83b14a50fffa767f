package live

import (
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"
)

// Launcher is what `inferload ui` does for its page: start a run from a
// request, list the run directories, find a run's report.html. The CLI
// implements it; one run goes on at a time.
type Launcher interface {
	// Start checks req, starts the run and returns its monitor and
	// control at once; the run goes on after Start returns and calls
	// the monitor's Finish when it ends.
	Start(req RunRequest) (*Monitor, Control, error)
	// Runs lists the run directories, newest first.
	Runs() ([]RunEntry, error)
	// ReportPath is the report.html of the run directory named name, or
	// an error when there is none or name is not a run directory's.
	ReportPath(name string) (string, error)
}

// RunRequest is the page's form: a run to start. Empty fields keep the
// plan file's value (when Plan is set) or the default.
type RunRequest struct {
	URL   string `json:"url"`
	Model string `json:"model"`
	API   string `json:"api"`
	// Plan is a plan file's path on the machine inferload runs on.
	Plan string `json:"plan"`
	// Mode is "users" (closed loop) or "rate" (open loop); Level the
	// users or requests/s.
	Mode         string  `json:"mode"`
	Level        float64 `json:"level"`
	Duration     string  `json:"duration"`
	InputTokens  string  `json:"input_tokens"`
	OutputTokens string  `json:"output_tokens"`
}

// RunEntry is one run directory in the list.
type RunEntry struct {
	Name string `json:"name"`
	// Report is the link to its report.html ("" while it has none).
	Report string `json:"report,omitempty"`
}

// ServeLauncher listens on addr and serves `inferload ui`: the launcher
// page at /, the live UI of the latest run started at /live/, the run
// list at /api/runs and each run's report.html at /runs/NAME/report.html.
// It starts runs and reads files, so it needs a token on loopback too,
// for reads as well: o.Token, or one generated (URL carries it, for the
// user to open).
func ServeLauncher(addr string, l Launcher, o UIOptions) (*UIServer, error) {
	s, err := listenUI(addr, o)
	if err != nil {
		return nil, err
	}
	s.start(s.guard(s.launcherRoutes(l)))
	return s, nil
}

func (s *UIServer) launcherRoutes(l Launcher) *http.ServeMux {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", serveLauncherPage)
	mux.HandleFunc("GET /assets/{name}", serveAsset)
	mux.Handle("/live/", http.StripPrefix("/live", s.routes()))
	mux.HandleFunc("GET /api/runs", func(w http.ResponseWriter, _ *http.Request) { s.listRuns(w, l) })
	mux.HandleFunc("POST /api/runs", func(w http.ResponseWriter, r *http.Request) { s.startRun(w, r, l) })
	mux.HandleFunc("GET /runs/{name}/report.html", func(w http.ResponseWriter, r *http.Request) { serveReport(w, r, l) })
	return mux
}

// Running reports whether the run shown has not finished.
func (s *UIServer) Running() bool {
	sess := s.sess.Load()
	return sess != nil && !sess.mon.finished()
}

// StopRun stops the run shown, if one is going on (Ctrl-C on `inferload
// ui`).
func (s *UIServer) StopRun() {
	if sess := s.sess.Load(); sess != nil && !sess.mon.finished() {
		sess.ctl.Stop()
	}
}

func (s *UIServer) startRun(w http.ResponseWriter, r *http.Request, l Launcher) {
	var req RunRequest
	if !readJSON(w, r, &req) {
		return
	}
	if s.Running() {
		writeError(w, http.StatusConflict, errors.New("a run is going on: stop it first"))
		return
	}
	mon, ctl, err := l.Start(req)
	if err != nil {
		writeError(w, http.StatusBadRequest, err)
		return
	}
	s.sess.Store(&session{mon: mon, ctl: ctl})
	writeJSON(w, http.StatusAccepted, map[string]string{"live": "live/"})
}

// RunList is GET /api/runs: the run directories and whether the page
// has a run to show at /live/ (going on or finished).
type RunList struct {
	Live    bool       `json:"live"`
	Running bool       `json:"running"`
	Runs    []RunEntry `json:"runs"`
}

func (s *UIServer) listRuns(w http.ResponseWriter, l Launcher) {
	runs, err := l.Runs()
	if err != nil {
		writeError(w, http.StatusInternalServerError, err)
		return
	}
	if runs == nil {
		runs = []RunEntry{}
	}
	writeJSON(w, http.StatusOK, RunList{Live: s.sess.Load() != nil, Running: s.Running(), Runs: runs})
}

// reportCSP keeps a served report.html offline: its inline script and
// style run, nothing is fetched.
const reportCSP = "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'"

func serveReport(w http.ResponseWriter, r *http.Request, l Launcher) {
	name := r.PathValue("name")
	if name == "" || name == "." || name == ".." || strings.ContainsAny(name, `/\`) {
		http.NotFound(w, r)
		return
	}
	path, err := l.ReportPath(name)
	if err != nil {
		http.Error(w, err.Error(), http.StatusNotFound)
		return
	}
	b, err := os.ReadFile(path)
	if err != nil {
		http.Error(w, fmt.Sprintf("run %s has no report.html yet", name), http.StatusNotFound)
		return
	}
	w.Header().Set("Content-Security-Policy", reportCSP)
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_, _ = w.Write(b)
}
