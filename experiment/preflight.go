package experiment

import (
	"context"
	"crypto/rand"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/inferload/inferload/analyze"
	"github.com/inferload/inferload/engine"
	"github.com/inferload/inferload/observe"
	"github.com/inferload/inferload/plan"
	"github.com/inferload/inferload/protocol"
	"github.com/inferload/inferload/record"
	"github.com/inferload/inferload/workload"
)

const (
	// preflightTimeout bounds the probe request: long enough for a cold
	// server's first prefill, short enough that a stalled target stops the
	// run within a minute rather than after its total timeout.
	preflightTimeout = 60 * time.Second
	// preflightSearch is how many of the workload's first requests are
	// looked at for an ordinary one (not bad input, not a chain).
	preflightSearch = 256
)

// PreflightError is a run stopped before its load started because the
// probe request failed: the target is not there, does not serve the
// model, refuses the key, or cannot answer one request.
type PreflightError struct {
	Kind record.ErrorKind
	Msg  string
	// Replica names the base URL that failed when the target has
	// replicas ("target.replicas[0] (http://host:8001/v1)"); "" for
	// target.url alone.
	Replica string
}

func (e *PreflightError) Error() string {
	where := "check target.url and target.model"
	if e.Replica != "" {
		where = "check " + e.Replica + " and target.model"
	}
	return fmt.Sprintf("pre-flight: the probe request failed (%s): %s; nothing was measured "+
		"(%s, or start anyway with --no-preflight)", e.Kind, e.Msg, where)
}

// preflight sends one request, the workload's first ordinary one asking
// for a single output token, before anything is written, so a dead
// target stops the run at once instead of being hammered for its whole
// duration. A reply without text passes: the server answered. A plan with target.preflight false, or whose first requests
// are all bad input or chains, is not probed.
func preflight(ctx context.Context, p *plan.Plan, client protocol.Client, files *workloadFiles, env Env) error {
	if !p.Target.Preflights() {
		return nil
	}
	cfg, err := engineConfig(p, client, files)
	if err != nil {
		return nil // prepare has already judged the plan; nothing to probe with
	}
	req, ok, err := probeRequest(cfg)
	if err != nil || !ok {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, preflightTimeout)
	defer cancel()
	if p.Target.TracesContext() {
		req.TraceID = record.ProbeTraceID
	}
	// With replicas, each one is probed: a dead replica would otherwise
	// fail its share of the run.
	clients := []protocol.Client{client}
	if b, ok := client.(*protocol.Balanced); ok {
		clients = b.Replicas()
	}
	for i, c := range clients {
		var t protocol.Trace
		c.Do(ctx, req, &t)
		// A reply that carried no text still shows a live server serving
		// the model: asked for one token, a model may well send an end of
		// sequence or a token that prints nothing (a random-weight test
		// model did), and that is no reason to refuse the run.
		if t.Err == record.ErrNone || t.Err == record.ErrEmptyOutput {
			continue
		}
		redact := planRedactor(p, env)
		msg := protocol.SanitizeMessage(redact, t.ErrMsg)
		if (t.Status == 404 || t.Err == record.ErrHTTP4xx) && i == 0 {
			msg += servedModels(ctx, p, env, redact)
		}
		e := &PreflightError{Kind: t.Err, Msg: msg}
		if i > 0 {
			e.Replica = fmt.Sprintf("target.replicas[%d] (%s)", i-1, stripUserinfo(p.Target.Replicas[i-1]))
		}
		return e
	}
	return nil
}

// probeRequest renders a request of the workload's first ordinary class
// (its API, model and body fields) with one output token and a prompt of
// its own: a probe that sent the first measured request's prompt would
// leave it in the server's prefix cache (llama.cpp served that request in
// 6-10 ms against a median of 67-89 ms), so the probe shares no prompt
// and no prefix with any measured request, nor its conversation.
func probeRequest(cfg engine.Config) (*protocol.Request, bool, error) {
	for i := range uint64(preflightSearch) {
		spec := cfg.Source.Spec(i)
		if spec.Expect != "" || cfg.Graphs[spec.Class] != nil {
			continue
		}
		spec.Prompt, spec.Messages, spec.MaxTokens, spec.InputTokens = probePrompt(), nil, 1, 0
		req, err := cfg.Render(spec)
		return req, err == nil, err
	}
	return nil, false, nil
}

// probePrompt is the probe's prompt: a prefix no workload writes and a
// nonce, so not even two runs' probes share it.
func probePrompt() string {
	return "[inferload pre-flight " + rand.Text()[:12] + "] Answer with one word."
}

// servedModels names the models the target's /models lists, to explain a
// 404 or 400 for the plan's model. The ids are the server's words, bound
// for the terminal and the live page: each is sanitised as an error body
// is (a gateway that echoes the Authorization header into them must not
// print the key; a hostile one must not send escape sequences), and only
// the first maxListedModels are named.
func servedModels(ctx context.Context, p *plan.Plan, env Env, redact record.Redactor) string {
	sv := observe.ProbeNative(ctx, probeClient(p, env), p.Target.URL, p.Target.API, p.Target.Model, probeHeaders(p, env))
	if len(sv.Models) == 0 {
		return ""
	}
	var ids []string
	for _, m := range sv.Models[:min(len(sv.Models), maxListedModels)] {
		ids = append(ids, protocol.SanitizeMessage(redact, m.ID))
	}
	if len(sv.Models) > maxListedModels {
		ids = append(ids, fmt.Sprintf("… (%d in all)", len(sv.Models)))
	}
	return fmt.Sprintf(" (target.model is %q; /models lists %s)", p.Target.Model, strings.Join(ids, ", "))
}

// maxListedModels bounds the models a pre-flight error names.
const maxListedModels = 10

// PlanError is a plan that cannot run as written, found before anything
// is sent: the CLI exits with its usage code (2).
type PlanError struct{ Err error }

func (e *PlanError) Error() string { return e.Err.Error() }
func (e *PlanError) Unwrap() error { return e.Err }

// checkNames refuses, before the run, a threshold on a figure no summary
// of this plan can hold and an --metrics name that is no Prometheus
// metric name, so a typo costs seconds, not a whole run.
func checkNames(p *plan.Plan) error {
	ths, err := p.Checks()
	if err != nil {
		return &PlanError{err}
	}
	if err := analyze.CheckNames(ths, planClasses(p)); err != nil {
		return &PlanError{err}
	}
	for _, m := range strings.Split(p.Observe.Metrics, ",") {
		if m = strings.TrimSpace(m); m != "" && !promName.MatchString(m) {
			return &PlanError{fmt.Errorf("observe.metrics: %q is not a Prometheus metric name (letters, digits, _ and :, not starting with a digit)", m)}
		}
	}
	return nil
}

// promName is the Prometheus metric name syntax.
var promName = regexp.MustCompile(`^[a-zA-Z_:][a-zA-Z0-9_:]*$`)

// planClasses are the class names the plan's summary can hold, nil when a
// trace may bring its own.
func planClasses(p *plan.Plan) []string {
	if p.Load.Shape() == plan.ShapeTrace {
		return nil
	}
	var names []string
	for _, c := range p.Workload.Classes {
		names = append(names, c.Name)
	}
	if len(names) == 0 {
		names = append(names, workload.DefaultClass)
	}
	if p.Workload.BadInput.Fraction > 0 {
		names = append(names, workload.BadInputClass)
	}
	return names
}
