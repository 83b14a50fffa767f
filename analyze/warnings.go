package analyze

// This file: the warnings, every reason a reader should not take a
// summary's figures at face value, each with its rule.

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/inferload/inferload/observe"
	"github.com/inferload/inferload/record"
)

// inputDiffWarn is the relative gap between the server's and the client's
// prompt token counts beyond which the summary warns (5%).
const inputDiffWarn = 0.05

// Warnings lists, in a fixed order, every reason a reader should not take
// the figures of s (a run's or one step's) at face value; c's confidence
// is the one the sample-size warning backs percentiles at, as validity
// does. The order is part of the output: summaries must be byte-identical
// when rebuilt. The list is never nil, so summary.json always has its
// "warnings" array.
func Warnings(s *record.Summary, c Criteria) []string {
	w := []string{}
	add := func(format string, args ...any) { w = append(w, fmt.Sprintf(format, args...)) }
	r, t := s.Requests, s.Tally
	measured := r.Succeeded + r.Failed

	if s.Interrupted {
		add("the run was interrupted: figures cover only the part that ran")
	}
	switch {
	case measured == 0:
		add("no measured requests: every figure is empty (is the warm-up as long as the run?)")
	case r.Succeeded == 0:
		add("no request succeeded: latency and throughput figures are empty; see errors")
	}
	if measured > 0 && s.WindowS <= 0 {
		add("the measured window has no length: throughput is reported as 0")
	}
	if msg := sampleWarning(r.Succeeded, c.withDefaults().Confidence); msg != "" {
		add("%s", msg)
	}
	switch {
	case s.Tokens.UsageImplausible > 0:
		add("%d of %d successful requests reported a usage count their request or reply cannot have (completion_tokens 0 beside a "+
			"streamed answer, more than 64 tokens a chunk, far past max_tokens, or not an integer; prompt_tokens over 8 × the prompt "+
			"sent + 65,536): the client's own figure was used instead (records keep the server's in usage_output_tokens or "+
			"usage_input_tokens)", s.Tokens.UsageImplausible, r.Succeeded)
	case s.Tokens.Counted > 0:
		add("output tokens of %d of %d successful requests were counted by the client, not reported by the server: "+
			"a stream chunk carrying several tokens counts as one (ask for usage: stream_options.include_usage)",
			s.Tokens.Counted, r.Succeeded)
	}
	if t.NonStreamed > 0 && s.Tokens.Source != record.SourceNone { // no text, no tokens: nothing to stream
		add("%d successful requests were not streamed: TTFT, ITL and TPOT come from streamed requests only", t.NonStreamed)
	}
	if msg := inputTokensWarning(s.Checks); msg != "" {
		add("%s", msg)
	}
	if c := s.Checks; c.IgnoreEOSNotHonoured > 0 {
		add("ignore_eos not honoured: %d of %d requests that asked for it returned output_tokens != max_tokens; "+
			"output lengths, TPOT and token throughput differ from the plan", c.IgnoreEOSNotHonoured, c.IgnoreEOSChecked)
	}
	if c := s.Checks; c.MaxTokensExceeded > 0 {
		add("max_tokens ignored: %d of %d requests got more output tokens than they asked for; "+
			"the server does not read max_tokens (some want max_completion_tokens or n_predict: set it in target.body)",
			c.MaxTokensExceeded, c.MaxTokensChecked)
	}
	if r.Late > 0 {
		add("%d of %d measured open-loop requests started late: the client could not keep to the schedule "+
			"(max_in_flight cap or client CPU); latencies count from the intended time, so the delay is in them",
			r.Late, t.OpenLoop)
	}
	if t.WarmupFailed > 0 {
		add("%d of %d warm-up requests failed (not counted in errors)", t.WarmupFailed, r.Warmup)
	}
	if t.Clamped > 0 {
		add("%d latency values were outside 0 to 1 h and were clamped to that range", t.Clamped)
	}
	if msg := spansWarning(s.Spans, r.Succeeded); msg != "" {
		add("%s", msg)
	}
	if t.Drained && s.WindowS > 0 {
		add("throughput is measured up to the last reply, drain included: " +
			"load was offered for too short a time (under 1 s after the warm-up) to measure it alone")
	}
	if s.Soak != nil {
		for _, d := range s.Soak.Drift {
			if !d.Tested { // a soak too short for a quantile: the drift verdict is not "stable"
				add("%s", d.Verdict)
			}
		}
	}
	return w
}

// spansWarning reads what the OTLP receiver got (s.Spans, present when the
// run listened): nothing at all beside successful requests means the
// server sends its spans elsewhere or not at all; spans whose trace id is
// no record's are counted, since they may be another client's load.
func spansWarning(sp *record.SpansSummary, succeeded int64) string {
	switch {
	case sp == nil:
		return ""
	case sp.Received-sp.Probe == 0 && succeeded > 0:
		return "listened for OTLP spans but none came: start the server with --otlp-traces-endpoint pointing at this host's --otlp-listen address (docs/server-time.md)"
	case sp.Unmatched > 0:
		return fmt.Sprintf("%d OTLP spans matched no record's trace id: another client's traffic, an earlier run's late spans, "+
			"or a gateway that started its own trace; they are left out of server_time", sp.Unmatched)
	}
	return ""
}

// sampleWarning says which tail percentiles n successful requests cannot
// back at confidence c, by the one minimum-samples rule validity uses too
// (MinSamples, docs/metrics.md "Minimum samples"): "" when they back P99.9.
func sampleWarning(n int64, c float64) string {
	p99, p999 := int64(MinSamples(0.99, c)), int64(MinSamples(0.999, c))
	switch {
	case n > 0 && n < p99:
		return fmt.Sprintf("only %d successful requests: P99 needs at least %d and P99.9 at least %d to be backed at %.0f%% confidence",
			n, p99, p999, 100*c)
	case n >= p99 && n < p999:
		return fmt.Sprintf("only %d successful requests: P99.9 needs at least %d to be backed at %.0f%% confidence", n, p999, 100*c)
	}
	return ""
}

// telemetryWarnings are the warnings the measured window's telemetry
// earns, after the figures' own: the client was saturated (s.Client, from
// observe.Summarize), or the host was busy with other work.
func telemetryWarnings(s *record.Summary, measured []observe.Sample) []string {
	var w []string
	if s.Client != nil && s.Client.Saturated {
		w = append(w, "the load generator was saturated ("+s.Client.Verdict+"): latency and throughput may measure the client, not the server; results may be invalid")
	}
	if msg := contentionWarning(measured); msg != "" {
		w = append(w, msg)
		if msg := hostBusyWarning(s); msg != "" {
			w = append(w, msg)
		}
	}
	return w
}

// hostBusyWarning ties the contention the client's telemetry saw to the
// verdicts it may explain: a staged run's steps, or a single-phase run
// (s.Validity, judged before the warnings), invalid for a reason in
// contentionKinds. "" when none is.
func hostBusyWarning(s *record.Summary) string {
	if len(s.Steps) > 0 {
		if n := contendedSteps(s.Steps); n > 0 {
			return fmt.Sprintf("host busy: %d of %d steps were invalid for reasons the host's other work, not the server, may explain (late starts, load short of the plan, a saturated client, an unsteady window): rerun on a quiet host", n, len(s.Steps))
		}
		return ""
	}
	if s.Validity == nil || !contended(*s.Validity) {
		return ""
	}
	var why []string
	for _, k := range s.Validity.Kinds {
		if contentionKinds[k] && !slices.Contains(why, contentionWords[k]) {
			why = append(why, contentionWords[k])
		}
	}
	return fmt.Sprintf("host busy: the run was invalid for reasons the host's other work, not the server, may explain (%s): rerun on a quiet host", strings.Join(why, ", "))
}

// contentionKinds are the validity rules a client starved of CPU by other
// processes can break: it sends late or less than planned, and its
// timings carry a lag that comes and goes with the other work (so a
// window can trend). Too few samples (the step was short), failures for
// descriptors or ports, and late starts the server's full in-flight cap
// held back (the client had room) are not among them.
var contentionKinds = map[string]bool{
	record.InvalidLoad: true, record.InvalidLate: true, record.InvalidClientSaturated: true,
	record.InvalidSegmentLate: true, record.InvalidUnsteady: true,
}

// contentionWords name contentionKinds in the warning's words.
var contentionWords = map[string]string{
	record.InvalidLoad: "load short of the plan", record.InvalidLate: "late starts",
	record.InvalidClientSaturated: "a saturated client", record.InvalidSegmentLate: "a segment's late starts",
	record.InvalidUnsteady: "an unsteady window",
}

// contendedSteps counts the steps invalid for at least one reason in
// contentionKinds.
func contendedSteps(steps []record.Step) int {
	n := 0
	for _, st := range steps {
		if contended(st.Validity) {
			n++
		}
	}
	return n
}

// contended says v is invalid for at least one reason in contentionKinds.
func contended(v record.Validity) bool {
	return !v.Valid && slices.ContainsFunc(v.Kinds, func(k string) bool { return contentionKinds[k] })
}

// contentionWarning notes lag the client did not cause: goroutines waited
// for a CPU while the client was mostly idle, so other processes held it.
// The results stand, but each timing may carry up to that much delay.
func contentionWarning(samples []observe.Sample) string {
	var worst float64
	n := 0
	for _, smp := range samples {
		if smp.Source == "client" && observe.Contended(smp) {
			worst = max(worst, smp.Values[observe.ClientSchedLagP99])
			n++
		}
	}
	if n == 0 {
		return ""
	}
	return fmt.Sprintf("the host was busy with other work: in %d client samples goroutines waited up to %.0f ms (p99) for a CPU while the load generator used under %.0f%% of its CPUs; timings may carry that much client-side delay", n, worst, observe.SaturationLagCPUPct)
}

// inputTokensWarning gives the prompt-length gap the advice its cause
// calls for (record.Checks.InputTokensCause, rules in docs/metrics.md
// "Token-count checks"): a cut prompt always warns; a template offset or
// a tokenizer gap warns beyond inputDiffWarn of the prompt tokens.
func inputTokensWarning(c record.Checks) string {
	switch {
	case c.InputTokensCause == record.CauseTruncated:
		return fmt.Sprintf("the server cut %d of %d prompts to %d tokens (the client sent up to %d): latency and "+
			"throughput measure shorter prompts than the plan asks; raise the server's context "+
			"(max_model_len, llama.cpp -c) or lower workload.input_tokens",
			c.InputTokensTruncated, c.InputTokensCompared, c.InputTokensTruncatedTo, c.InputTokensLongest)
	case c.InputTokensCompared == 0 || math.Abs(c.InputTokensDiff) <= inputDiffWarn:
		return ""
	case c.InputTokensCause == record.CauseTemplate:
		return fmt.Sprintf("the server counted a constant %+.0f tokens per request beside the client's count over %d requests "+
			"(%+.1f%% of the prompt tokens): that is the chat template or a BOS token, not the tokenizer; "+
			"prompts are as long as planned plus that offset",
			c.InputTokensOffset, c.InputTokensCompared, 100*c.InputTokensDiff)
	}
	return fmt.Sprintf("the server counted %+.1f%% input tokens compared with the client's tokenizer over %d requests, "+
		"growing with the prompt's length: prompt lengths are not what the plan says "+
		"(set workload.tokenizer to the model's tokenizer.json or SentencePiece tokenizer.model)", 100*c.InputTokensDiff, c.InputTokensCompared)
}
