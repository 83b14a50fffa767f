package plan

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net"
	"net/url"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/inferload/inferload/protocol"
	"github.com/inferload/inferload/record"
	"github.com/inferload/inferload/schedule"
	"github.com/inferload/inferload/workload"
)

// Sanity limits that catch typos (an extra zero or three) before they
// start a million goroutines.
const (
	maxConcurrency = 1_000_000
	// maxRate bounds load.rate: a million requests a second is past any
	// one client host; 1e308 (accepted before) is a typo or an attack.
	maxRate     = 1_000_000
	maxInFlight = 1_000_000
)

// validator collects problems, each tagged with where its value came from.
type validator struct {
	p    *Plan
	errs Errors
}

// fail records a problem with the field at path.
func (v *validator) fail(path, format string, args ...any) {
	v.errs = append(v.errs, &FieldError{Source: v.p.origin[path], Field: path, Problem: fmt.Sprintf(format, args...)})
}

// Validate checks a plan with its defaults applied and returns every
// problem found as Errors, or nil.
func (p *Plan) Validate() error {
	v := &validator{p: p}
	v.name()
	v.target()
	v.apis()
	v.headers()
	v.body()
	v.timeouts()
	v.retry()
	v.loadModel()
	v.openLoop()
	v.closedLoop()
	v.stopConditions()
	v.stages()
	v.segment()
	v.workload()
	v.slos()
	v.compute()
	v.thresholds()
	v.otlp()
	if p.Output.Dir == "" || strings.ContainsRune(p.Output.Dir, 0) {
		v.fail("output.dir", "want a directory path")
	}
	return v.errs.err()
}

// safeName is what may name a run directory on any file system.
var safeName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)

func (v *validator) name() {
	if !safeName.MatchString(v.p.Name) {
		v.fail("name", "%q cannot name a run directory: use 1-64 letters, digits, '.', '_' or '-', starting with a letter or digit", v.p.Name)
	}
}

func (v *validator) target() {
	t := &v.p.Target
	if t.URL == "" {
		v.fail("target.url", "required: the API base URL, e.g. http://127.0.0.1:8000/v1")
	} else {
		v.baseURL("target.url", t.URL)
	}
	v.replicas()
	if !knownAPI(t.API) {
		v.fail("target.api", "%q is not an API: want %s", t.API, protocol.APINames())
	}
	if t.APIKeyEnv != "" && t.APIKeyFile != "" {
		v.fail("target.api_key_file", "set api_key_env or api_key_file, not both")
	}
	v.http2()
	if t.Insecure && t.CAFile != "" {
		v.fail("target.ca_file", "has no effect with insecure: true, which skips certificate checks; drop one")
	}
}

// baseURL checks one API base URL: http(s), a host, no query.
func (v *validator) baseURL(field, raw string) {
	u, err := url.Parse(raw)
	switch {
	case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "":
		hint := ""
		if err == nil {
			hint = protocol.GRPCSchemeHint(u.Scheme)
		}
		v.fail(field, "%q is not an http:// or https:// URL with a host, e.g. http://127.0.0.1:8000/v1%s", redactURL(raw), hint)
	case u.RawQuery != "" || u.ForceQuery:
		// The query is not printed: it is where a key given by mistake
		// would be, and this message goes to terminals and CI logs.
		u.RawQuery, u.ForceQuery, u.Fragment = "", false, ""
		v.fail(field, "%s?…: a base URL must not have a query (a key in the URL would reach logs and proxies: "+
			"use api_key_env, api_key_file or a header)", redactURL(u.String()))
	default:
		if err := checkPort(u); err != nil {
			v.fail(field, "%s: %v", redactURL(raw), err)
		}
	}
}

// maxReplicas bounds target.replicas: each is a connection pool of its own.
const maxReplicas = 64

// replicas checks target.replicas: base URLs as target.url, of its
// scheme (one HTTP/2 and TLS setting serves them all), none twice, and
// an API they all speak over HTTP.
func (v *validator) replicas() {
	t := &v.p.Target
	if len(t.Replicas) == 0 {
		return
	}
	if len(t.Replicas) > maxReplicas {
		v.fail("target.replicas", "%d replicas: at most %d", len(t.Replicas), maxReplicas)
		return
	}
	if protocol.API(t.API) == protocol.APITritonGRPC {
		v.fail("target.replicas", "not with api triton-grpc, whose one connection serves one server")
	}
	first, _ := url.Parse(t.URL)
	seen := map[string]bool{t.URL: true}
	for i, r := range t.Replicas {
		field := fmt.Sprintf("target.replicas[%d]", i)
		v.baseURL(field, r)
		if seen[r] {
			v.fail(field, "%s is listed twice (with target.url): each replica once", redactURL(r))
		}
		seen[r] = true
		if u, err := url.Parse(r); err == nil && first != nil && u.Scheme != first.Scheme {
			v.fail(field, "%s: %s://, where target.url is %s://; every replica is reached the same way", redactURL(r), u.Scheme, first.Scheme)
		}
	}
}

// BaseURLs is every API base the requests go to: target.url, then its
// replicas.
func (t Target) BaseURLs() []string {
	return append([]string{t.URL}, t.Replicas...)
}

// http2 checks target.http2 against the URL's scheme.
func (v *validator) http2() {
	t := &v.p.Target
	if t.HTTP2 == "" {
		return
	}
	u, err := url.Parse(t.URL)
	if err != nil {
		return // target.url's own error says it
	}
	switch {
	case t.HTTP2 != protocol.HTTP2TLS && t.HTTP2 != protocol.HTTP2Cleartext:
		v.fail("target.http2", "%q: want h2 (HTTP/2 over TLS, an https URL) or h2c (cleartext HTTP/2 with prior knowledge, an http URL)", t.HTTP2)
	case t.HTTP2 == protocol.HTTP2TLS && u.Scheme != "https":
		v.fail("target.http2", "h2 is negotiated over TLS: target.url must be https:// (cleartext HTTP/2 is h2c)")
	case t.HTTP2 == protocol.HTTP2Cleartext && u.Scheme != "http":
		v.fail("target.http2", "h2c is cleartext: target.url must be http:// (HTTP/2 over TLS is h2)")
	}
}

func (v *validator) headers() {
	names := make([]string, 0, len(v.p.Target.Headers))
	for name := range v.p.Target.Headers {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		path := "target.headers." + name
		if !isToken(name) {
			v.fail(path, "%q is not a valid HTTP header name", name)
		}
		if strings.ContainsAny(v.p.Target.Headers[name], "\r\n\x00") {
			v.fail(path, "header values cannot contain line breaks or NUL")
		}
	}
}

// isToken reports whether s is an RFC 9110 token, the syntax of a header
// name.
func isToken(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range []byte(s) {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0) {
			return false
		}
	}
	return true
}

func (v *validator) body() {
	if _, err := json.Marshal(v.p.Target.Body); err != nil {
		v.fail("target.body", "cannot be sent as JSON: %v", err)
	}
}

func (v *validator) timeouts() {
	for _, f := range []struct {
		path string
		d    time.Duration
	}{
		{"target.timeouts.connect", v.p.Target.Timeouts.Connect},
		{"target.timeouts.ttft", v.p.Target.Timeouts.TTFT},
		{"target.timeouts.total", v.p.Target.Timeouts.Total},
	} {
		if f.d <= 0 {
			v.fail(f.path, "%v: want a positive duration", f.d)
		}
	}
}

// loadModel checks that exactly one of closed loop and open loop is chosen.
func (v *validator) loadModel() {
	l := &v.p.Load
	_, concurrencySet := v.p.origin["load.concurrency"]
	switch {
	case l.Concurrency < 0 || (l.Concurrency == 0 && concurrencySet):
		v.fail("load.concurrency", "%d: want a positive number of users", l.Concurrency)
	case l.Concurrency > maxConcurrency:
		v.fail("load.concurrency", "%d users is more than %d; is there an extra zero?", l.Concurrency, maxConcurrency)
	}
	switch {
	case math.IsNaN(l.Rate) || math.IsInf(l.Rate, 0) || l.Rate < 0:
		v.fail("load.rate", "%v: want a positive number of requests per second", l.Rate)
	case l.Rate > maxRate:
		v.fail("load.rate", "%v requests/s is more than %d; is there an extra zero?", l.Rate, maxRate)
	}
	closed, open, trace, flops := l.Concurrency > 0, l.Rate > 0, l.Trace.Path != "", l.FLOPsPerS > 0
	switch {
	case closed && open:
		v.fail("load.rate", "set load.concurrency (closed loop: N users) or load.rate (open loop: requests/s), not both")
	case trace && (closed || open):
		v.fail("load.trace.path", "a trace is its own arrival schedule: drop load.concurrency and load.rate")
	case flops && (closed || open || trace):
		v.fail("load.flops_per_s", "paces the arrivals itself: drop load.concurrency, load.rate and load.trace")
	case !closed && !open && !trace && !flops && l.Concurrency == 0 && l.Rate == 0 && !concurrencySet:
		v.fail("load", "set load.concurrency (closed loop, --concurrency N), load.rate (open loop, --rate R) or load.trace (replay a log, --trace FILE)")
	}
	switch {
	case math.IsNaN(l.FLOPsPerS) || math.IsInf(l.FLOPsPerS, 0) || l.FLOPsPerS < 0:
		v.fail("load.flops_per_s", "%v: want a positive number of FLOP/s, e.g. 2e15", l.FLOPsPerS)
	case flops && !(v.p.Compute.ParamsB > 0):
		v.fail("load.flops_per_s", "needs the model's size to turn FLOP/s into requests: set compute.params_b (--model-params-b)")
	}
	v.trace()
}

// trace checks a trace replay: the log decides arrivals and lengths.
func (v *validator) trace() {
	t, w := v.p.Load.Trace, &v.p.Workload
	if t == (Trace{}) {
		return
	}
	if t.Path == "" {
		v.fail("load.trace.path", "set the trace file, or drop load.trace")
		return
	}
	if t.Format != "" && !slices.Contains(schedule.TraceFormats(), t.Format) {
		v.fail("load.trace.format", "%q: want one of %s (or leave it out to guess)", t.Format, strings.Join(schedule.TraceFormats(), ", "))
	}
	if !(t.Speed > 0) || math.IsInf(t.Speed, 0) || t.Speed > 1e6 {
		v.fail("load.trace.speed", "%v: want a positive factor (2 replays twice as fast)", t.Speed)
	}
	if t.MaxGap < 0 {
		v.fail("load.trace.max_gap", "%v: want a positive duration (or leave it out to keep every gap)", t.MaxGap)
	}
	switch {
	case t.BlockTokens < 0 || t.BlockTokens > schedule.MaxBlockTokens:
		v.fail("load.trace.block_tokens", "%d: want 1 to %d tokens per hash id (or leave it out for %d)", t.BlockTokens, schedule.MaxBlockTokens, schedule.DefaultBlockTokens)
	case t.BlockTokens > 0 && t.Format != "" && t.Format != schedule.TraceMooncake && t.Format != schedule.TraceDynamo && t.Format != schedule.TraceWeka:
		v.fail("load.trace.block_tokens", "only applies to a mooncake, dynamo or weka trace (load.trace.format is %s)", t.Format)
	}
	if t.Loop && (t.Format == schedule.TraceDynamo || t.Format == schedule.TraceWeka) {
		v.fail("load.trace.loop", "an agent trace (%s) replays its sessions once: drop load.trace.loop", t.Format)
	}
	if len(w.Classes) > 0 || w.Dataset.Path != "" || w.BadInput.Fraction > 0 {
		v.fail("load.trace.path", "the trace decides request lengths: drop workload.classes, workload.dataset and workload.bad_input")
	}
	if len(v.p.Load.Stages) > 0 {
		v.fail("load.trace.path", "a trace is its own schedule: drop load.stages")
	}
}

// openLoop checks the options that only apply with load.rate.
func (v *validator) openLoop() {
	l := &v.p.Load
	open := l.OpenLoop()
	if l.Arrival != "" {
		if !l.scheduled() {
			v.fail("load.arrival", "only applies with load.rate (open loop)")
		} else if !slices.Contains(schedule.ArrivalKinds(), l.Arrival) {
			v.fail("load.arrival", "%q: want one of %s", l.Arrival, strings.Join(schedule.ArrivalKinds(), ", "))
		}
	}
	if l.Burstiness != 0 && l.Arrival != schedule.Gamma {
		v.fail("load.burstiness", "only applies with arrival: gamma")
	} else if l.Arrival == schedule.Gamma && !(l.Burstiness > 0 && !math.IsInf(l.Burstiness, 0)) {
		v.fail("load.burstiness", "%v: want a number above 0 (1 is Poisson, below 1 burstier)", l.Burstiness)
	}
	switch {
	case l.MaxInFlight < 0 || l.MaxInFlight > maxInFlight:
		v.fail("load.max_in_flight", "%d: want 0 (no cap) to %d", l.MaxInFlight, maxInFlight)
	case l.MaxInFlight > 0 && !open:
		v.fail("load.max_in_flight", "only applies with load.rate or load.trace (closed loop is capped by its users)")
	}
	switch {
	case l.LateAfter < 0:
		v.fail("load.late_after", "%v: want a positive duration", l.LateAfter)
	case l.LateAfter > 0 && !open:
		v.fail("load.late_after", "only applies with load.rate or load.trace (open loop)")
	}
}

// closedLoop checks the options that only apply with load.concurrency.
func (v *validator) closedLoop() {
	l := &v.p.Load
	if l.ThinkTime == "" {
		return
	}
	if l.Concurrency <= 0 && !(l.Shape() == ShapeRate && v.p.conversations()) {
		v.fail("load.think_time", "only applies with load.concurrency (closed loop), or with load.rate when some class has turns (a conversation's pause between a reply and its next turn)")
		return
	}
	if _, err := schedule.ParseThinkTime(l.ThinkTime); err != nil {
		v.fail("load.think_time", "%v", err)
	}
}

func (v *validator) stopConditions() {
	l := &v.p.Load
	_, durationSet := v.p.origin["load.duration"]
	if l.Duration < 0 || (l.Duration == 0 && durationSet) {
		v.fail("load.duration", "%v: want a positive duration (leave it out for the default: 1m unless load.requests is set)", l.Duration)
	}
	if l.Requests < 0 {
		v.fail("load.requests", "%d: want a positive number of requests", l.Requests)
	}
	if l.Duration == 0 && l.Requests == 0 && !l.PlaysOnce() && !durationSet {
		v.fail("load.duration", "set load.duration, load.requests or both")
	}
	switch {
	case l.Warmup < 0:
		v.fail("load.warmup", "%v: want a positive duration", l.Warmup)
	case l.Duration > 0 && l.Warmup >= l.Duration:
		v.fail("load.warmup", "%v leaves nothing to measure in a %v run: want less than load.duration", l.Warmup, l.Duration)
	}
	if l.Grace < 0 {
		v.fail("load.grace", "%v: want a positive duration", l.Grace)
	}
	if !(l.SpawnRate >= 0) || math.IsInf(l.SpawnRate, 0) {
		v.fail("load.spawn_rate", "%g: want users per second above 0 (or 0 for the default: over the first half of the warm-up)", l.SpawnRate)
	}
}

// length checks a token length spec with workload's own parser.
func (v *validator) length(path, spec string) {
	d, err := workload.ParseDist(spec)
	if err != nil {
		v.fail(path, "%v", err)
		return
	}
	if d.Min() < 1 {
		v.fail(path, "%s can be %d; want at least 1 token", d, d.Min())
	}
}

// thresholds checks that each expression parses; whether its metric exists
// is only known once the summary does.
func (v *validator) thresholds() {
	v.p.checks = nil
	for i, expr := range v.p.Thresholds {
		th, err := record.ParseThreshold(expr)
		if err != nil {
			v.fail(fmt.Sprintf("thresholds[%d]", i), "%v", err)
			continue
		}
		v.p.checks = append(v.p.checks, th)
	}
}

// stages parses load.stages, so a malformed stage is reported with its
// line before anything runs.
func (v *validator) stages() {
	if len(v.p.Load.Stages) == 0 {
		return
	}
	stages, err := schedule.ParseStages(v.p.Load.Stages, v.p.Load.Mode())
	var se *schedule.StageError
	if errors.As(err, &se) {
		v.fail(fmt.Sprintf("load.stages[%d]", se.Index), "%q: %v", se.Item, se.Err)
		return
	} else if err != nil {
		v.fail("load.stages", "%v", err)
		return
	}
	for i, st := range stages {
		if v.p.Load.Warmup >= st.Duration {
			v.fail("load.warmup", "%s: each stage discards its own warm-up, so it must be shorter than every stage (load.stages[%d] lasts %s)",
				v.p.Load.Warmup, i, st.Duration)
			return
		}
	}
}

// segment checks load.segment: each segment must have something to run
// (a closed loop of fewer users than segments would leave some without one).
func (v *validator) segment() {
	l := &v.p.Load
	seg, err := schedule.ParseSegment(l.Segment)
	if err != nil {
		v.fail("load.segment", "%v", err)
		return
	}
	if seg.Whole() {
		return
	}
	if l.Mode() == record.ModeClosed && l.Concurrency < seg.Count {
		v.fail("load.segment", "%s: %d users cannot be shared by %d segments: want load.concurrency ≥ %d", l.Segment, l.Concurrency, seg.Count, seg.Count)
	}
	if l.Requests > 0 && l.Requests < seg.Count {
		v.fail("load.segment", "%s: %d requests cannot be shared by %d segments: want load.requests ≥ %d", l.Segment, l.Requests, seg.Count, seg.Count)
	}
	stages, err := schedule.ParseStages(l.Stages, l.Mode())
	if err != nil {
		return // reported by stages
	}
	for i, st := range stages {
		if st.Mode == record.ModeClosed && max(st.From, st.Target) < float64(seg.Count) {
			v.fail("load.segment", "%s: load.stages[%d] holds %g users, fewer than the %d segments", l.Segment, i, max(st.From, st.Target), seg.Count)
		}
	}
}

// checkPort rejects a port net/http would only refuse per request (99999
// would fail every request as "invalid port").
func checkPort(u *url.URL) error {
	p := u.Port()
	if p == "" {
		if strings.HasSuffix(u.Host, ":") {
			return errors.New("empty port")
		}
		return nil
	}
	n, err := strconv.Atoi(p)
	if err != nil || n < 1 || n > 65535 {
		return fmt.Errorf("port %q is not between 1 and 65535", p)
	}
	return nil
}

// otlp checks the OTLP receiver's address and wait.
func (v *validator) otlp() {
	o := &v.p.Observe
	if o.OTLPListen != "" {
		if _, port, err := net.SplitHostPort(o.OTLPListen); err != nil || port == "" {
			v.fail("observe.otlp_listen", "%q is not an address to listen on: want host:port or :port, e.g. :4317", o.OTLPListen)
		}
	}
	if o.OTLPWait < 0 {
		v.fail("observe.otlp_wait", "%v: want a positive duration", o.OTLPWait)
	}
}
