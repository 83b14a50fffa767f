package record

import (
	"fmt"
	"math"
)

// Sample sizes below which a tail percentile is mostly one or two requests.
const (
	minSamplesP99  = 100
	minSamplesP999 = 1000
)

// inputDiffWarn is the relative gap between the server's and the client's
// prompt token counts beyond which the summary warns (5%).
const inputDiffWarn = 0.05

// warnings lists, in a fixed order, every reason a reader should not take
// the summary's figures at face value. The order is part of the output:
// summaries must be byte-identical when rebuilt.
func (a *Aggregate) warnings(s *Summary) []string {
	w := []string{}
	add := func(format string, args ...any) { w = append(w, fmt.Sprintf(format, args...)) }
	measured := a.succeeded + a.failed

	if s.Interrupted {
		add("the run was interrupted: figures cover only the part that ran")
	}
	switch {
	case measured == 0:
		add("no measured requests: every figure is empty (is the warm-up as long as the run?)")
	case a.succeeded == 0:
		add("no request succeeded: latency and throughput figures are empty; see errors")
	}
	if measured > 0 && s.WindowS <= 0 {
		add("the measured window has no length: throughput is reported as 0")
	}
	switch {
	case a.succeeded > 0 && a.succeeded < minSamplesP99:
		add("only %d successful requests: P99 needs at least %d and P99.9 at least %d to mean much",
			a.succeeded, minSamplesP99, minSamplesP999)
	case a.succeeded >= minSamplesP99 && a.succeeded < minSamplesP999:
		add("only %d successful requests: P99.9 needs at least %d to mean much", a.succeeded, minSamplesP999)
	}
	if a.counted > 0 {
		add("output tokens of %d of %d successful requests were counted by the client, not reported by the server: "+
			"a stream chunk carrying several tokens counts as one (ask for usage: stream_options.include_usage)",
			a.counted, a.succeeded)
	}
	if a.nonStream > 0 {
		add("%d successful requests were not streamed: TTFT, ITL and TPOT come from streamed requests only", a.nonStream)
	}
	if d := s.Checks.InputTokensDiff; a.inCompared > 0 && math.Abs(d) > inputDiffWarn {
		add("the server counted %+.1f%% input tokens compared with the client's tokenizer over %d requests: "+
			"prompt lengths are not what the plan says (set workload.tokenizer to the model's tokenizer.json; "+
			"chat templates add a few tokens per request)", 100*d, a.inCompared)
	}
	if a.eosNotHonoured > 0 {
		add("ignore_eos not honoured: %d of %d requests that asked for it returned output_tokens != max_tokens; "+
			"output lengths, TPOT and token throughput differ from the plan", a.eosNotHonoured, a.eosChecked)
	}
	if a.late > 0 {
		add("%d of %d measured open-loop requests started late: the client could not keep to the schedule "+
			"(max_in_flight cap or client CPU); latencies count from the intended time, so the delay is in them",
			a.late, a.openLoop)
	}
	if a.warmupFailed > 0 {
		add("%d of %d warm-up requests failed (not counted in errors)", a.warmupFailed, a.warmup)
	}
	if n := a.clamped(); n > 0 {
		add("%d latency values were outside 0 to 1 h and were clamped to that range", n)
	}
	return w
}
