package record

import (
	"encoding/json"
	"fmt"
	"io"
	"time"
)

// SchemaVersion is the summary.json schema this package writes. It changes
// only when a field is removed or changes meaning; added fields keep it.
const SchemaVersion = 1

// Summary is summary.json: the aggregate of a run's measured window. Every
// field is documented in docs/summary.md and every figure's definition in
// docs/metrics.md. The same records in the same order (or in any order)
// give a byte-identical encoding.
type Summary struct {
	SchemaVersion int       `json:"schema_version"`
	Name          string    `json:"name"`
	Started       time.Time `json:"started"`
	Mode          string    `json:"mode"`
	// WindowS is the measured window's length in seconds.
	WindowS     float64 `json:"window_s"`
	Interrupted bool    `json:"interrupted"`

	Requests Requests `json:"requests"`
	// FailureRate is failed / (succeeded + failed), 0 when both are 0.
	FailureRate float64 `json:"failure_rate"`
	// Errors counts measured failures by kind; kinds with no failure are absent.
	Errors map[string]int64 `json:"errors"`
	// Retries compares offered requests with attempted ones; absent when
	// no request was retried (record/retry.go).
	Retries *Retries `json:"retries,omitempty"`

	Metrics Metrics `json:"metrics"`
	// FailedE2E is the end-to-end latency of measured failed requests.
	FailedE2E Stats `json:"failed_e2e_ms"`

	Throughput Throughput `json:"throughput"`
	Tokens     Tokens     `json:"tokens"`
	// ServerTime is where the time went by the server's own account
	// (queue, prefill, decode, outside the server); nil without timings.
	ServerTime *ServerTimeSummary `json:"server_time,omitempty"`
	// PrefixCache compares the TTFT of prefix-cache hits with misses'; nil
	// when no request was a hit.
	PrefixCache *PrefixCacheSplit `json:"prefix_cache,omitempty"`
	// Reasoning counts the requests that reasoned and their events by
	// channel; nil when none did (record/reasoning.go).
	Reasoning *ReasoningSummary `json:"reasoning,omitempty"`
	// Accuracy is how the graded replies fared; nil when none was graded
	// (record/grading.go).
	Accuracy *Accuracy `json:"accuracy,omitempty"`
	// PrefixReuse sets the prefix reuse the workload asked for against
	// what the server reported; nil when no request asked (prefixreuse.go).
	PrefixReuse *PrefixReuse `json:"prefix_reuse,omitempty"`
	// Spans is what the OTLP receiver got and how it joined to the
	// records; nil when the run did not listen for spans.
	Spans  *SpansSummary `json:"spans,omitempty"`
	Checks Checks        `json:"checks"`
	// Goodput is what met its class's SLO (record/goodput.go).
	Goodput Goodput `json:"goodput"`
	// Compute is the FLOPs estimate; absent unless the plan declares the
	// model's size (record/flops.go).
	Compute *Compute `json:"compute,omitempty"`
	// Replicas break the figures down by the base URL that served them
	// (target.url and target.replicas), in order; absent for a target of
	// one.
	Replicas []ReplicaBreakdown `json:"replicas,omitempty"`
	// Classes break the figures down by request class, keyed by class
	// name ("default" when the plan has no classes).
	Classes map[string]*Breakdown `json:"classes"`
	// InputBuckets break them down by prompt length, shortest first.
	InputBuckets []InputBucket `json:"input_buckets"`
	// Chains has the per-step and end-to-end figures of each multi-step
	// chain class, keyed by class name; absent without one (record/chain.go).
	Chains map[string]*ChainSummary `json:"chains,omitempty"`
	// Sessions has the per-conversation figures of each conversational
	// class (turns > 1), keyed by class name; absent when no conversation
	// ran (record/session.go).
	Sessions map[string]*SessionSummary `json:"sessions,omitempty"`
	// Warnings are plain sentences, in a fixed order, about figures a reader
	// should not trust as-is (analyze.Warnings and analyze.Diagnose).
	Warnings []string `json:"warnings"`
	// Thresholds are the plan's pass/fail checks, in plan order; absent when
	// the plan has none.
	Thresholds []ThresholdResult `json:"thresholds,omitempty"`
	// ThresholdsAllowInvalid: the plan's allow_invalid, so its thresholds
	// gate a run that is NOT VALID too; absent (false) by default, when
	// such a run exits with its own code whatever its thresholds say.
	ThresholdsAllowInvalid bool `json:"thresholds_allow_invalid,omitempty"`
	// Validity says whether a single-phase run's figures can be trusted as
	// they are (enough samples, the intended load achieved, the client not
	// saturated); staged runs judge each step instead (steps[].validity).
	Validity *Validity `json:"validity,omitempty"`
	// Steps has one entry per stage of a staged run or sweep, in order;
	// absent from a single-phase run (record/steps.go).
	Steps []Step `json:"steps,omitempty"`
	// Knee is a sweep's knee detection; absent from other runs.
	Knee *Knee `json:"knee,omitempty"`
	// Capacity is a capacity search's answer, or the highest step of a
	// sweep with objectives at which every one held; absent from other
	// runs.
	Capacity *Capacity `json:"capacity,omitempty"`
	// Operating is a sweep's recommended operating point; absent from
	// other runs.
	Operating *OperatingPoint `json:"operating_point,omitempty"`
	// Soak is a soak run's windows and drift; absent from other runs.
	Soak *Soak `json:"soak,omitempty"`
	// Segments has each segment's own figures in a run merged from
	// segments (distributed), in segment order; absent from other runs.
	Segments []SegmentFigures `json:"segments,omitempty"`
	// Server is what scraped server and GPU metrics showed during the
	// measured window; absent when nothing was observed (record/telemetry.go).
	Server *ServerTelemetry `json:"server,omitempty"`
	// Client is the load generator's own load and saturation verdict.
	Client *ClientTelemetry `json:"client,omitempty"`
	// ClientReads is the clock the token events were stamped with and the
	// client's read lag, from the records; absent without a measured
	// success that had a content event (record/clientreads.go).
	ClientReads *ClientReads `json:"client_reads,omitempty"`
	// Connections is how many connections the requests opened and which
	// protocol answered; nil for records without those fields.
	Connections *Connections `json:"connections,omitempty"`
	// Hints are bottleneck hints from the rules in docs/telemetry.md
	// (analyze.Hints).
	Hints []Hint `json:"hints,omitempty"`

	// Tally is what the warnings read that no figure above shows; it is
	// not part of summary.json.
	Tally Tally `json:"-"`
}

// ThresholdResult is the verdict of one threshold expression.
type ThresholdResult struct {
	// Expr is the expression as the plan wrote it.
	Expr string `json:"expr"`
	// Metric is the summary figure it was resolved to ("metrics.ttft_ms.p99").
	Metric string `json:"metric,omitempty"`
	// Value is that figure's value.
	Value  float64 `json:"value"`
	Passed bool    `json:"passed"`
	// Error says why the expression could not be checked (then Passed is false).
	Error string `json:"error,omitempty"`
}

// Requests counts every record of the run.
type Requests struct {
	// Total is every record: Succeeded + Failed + ExpectedRejections +
	// ClientFailed + Warmup.
	Total     int64 `json:"total"`
	Succeeded int64 `json:"succeeded"`
	Failed    int64 `json:"failed"`
	// ExpectedRejections counts measured bad-input requests refused with a
	// 4xx, as they should be: passes, neither successes nor failures.
	ExpectedRejections int64 `json:"expected_rejections"`
	// Warmup counts records sent during the warm-up, whatever their outcome.
	Warmup int64 `json:"warmup"`
	// Late counts measured open-loop requests that started late.
	Late int64 `json:"late"`
	// ClientFailed counts measured requests the load generator failed
	// itself (ErrClientResource: out of file descriptors, local ports or
	// its reply budget). They are not the target's failures: not in
	// Failed nor the failure rate, only in errors under their kind.
	ClientFailed int64 `json:"client_failed"`
}

// Metrics are the latency distributions of measured successful requests.
type Metrics struct {
	TTFT       Stats `json:"ttft_ms"`
	ITL        Stats `json:"itl_ms"`
	TPOT       Stats `json:"tpot_ms"`
	E2E        Stats `json:"e2e_ms"`
	QueueDelay Stats `json:"queue_delay_ms"`
	// The per-channel figures of reasoning models (docs/metrics.md#reasoning),
	// nil (absent) unless some request reasoned: time to the first
	// reasoning event, to the first answer event (TTFT for a request that
	// did not reason), the reasoning phase (TTFO − TTFR), and the gaps
	// within each channel of the requests that reasoned.
	TTFR           *Stats `json:"ttfr_ms,omitempty"`
	TTFO           *Stats `json:"ttfo_ms,omitempty"`
	ReasoningPhase *Stats `json:"reasoning_ms,omitempty"`
	ITLReasoning   *Stats `json:"itl_reasoning_ms,omitempty"`
	ITLAnswer      *Stats `json:"itl_answer_ms,omitempty"`
}

// Throughput is per second of the measured window, from measured
// successful requests.
type Throughput struct {
	RequestsPerS     float64 `json:"requests_per_s"`
	OutputTokensPerS float64 `json:"output_tokens_per_s"`
	InputTokensPerS  float64 `json:"input_tokens_per_s"`
}

// The values of Tokens.Source.
const (
	SourceUsage   = "usage"   // every measured success carried server usage
	SourceCounted = "counted" // none did: output tokens are counted events
	SourceMixed   = "mixed"   // some did
	SourceNone    = "none"    // there was no measured success
)

// Tokenless reports whether the run's measured successes carried no
// token at all, sent or received (a templated API in front of an image
// classifier): its token figures are zeros that mean nothing, and reports
// leave them out.
func (s *Summary) Tokenless() bool {
	return s.Requests.Succeeded > 0 && s.Tokens.Source == SourceNone && s.Tokens.InputTotal == 0 && s.Tokens.OutputTotal == 0
}

// Tokens totals the tokens of measured successful requests.
type Tokens struct {
	Source         string `json:"source"`
	InputTotal     int64  `json:"input_total"`
	OutputTotal    int64  `json:"output_total"`
	ReasoningTotal int64  `json:"reasoning_total"`
	// UsageReported counts successes whose output count came from usage.
	UsageReported int64 `json:"usage_reported"`
	// Counted counts successes whose output count was counted by the client.
	Counted int64 `json:"counted"`
	// UsageImplausible counts successes whose usage count could not be
	// true of the reply (record.PlausibleUsage): counted instead.
	UsageImplausible int64 `json:"usage_implausible"`
}

// Checks are sanity checks on what the server did with the request.
type Checks struct {
	// IgnoreEOSChecked counts successes that asked for ignore_eos with a
	// max_tokens, i.e. whose output length is known in advance.
	IgnoreEOSChecked int64 `json:"ignore_eos_checked"`
	// IgnoreEOSNotHonoured counts those whose output_tokens != max_tokens.
	IgnoreEOSNotHonoured int64 `json:"ignore_eos_not_honoured"`
	// InputTokensCompared counts successes whose usage gave the server's
	// prompt length, compared with the client's own count.
	InputTokensCompared int64 `json:"input_tokens_compared"`
	// InputTokensDiff is (server − client) ÷ client over those requests:
	// how far the server's prompt lengths are from the client's.
	InputTokensDiff float64 `json:"input_tokens_diff"`
	// InputTokensCause says why they differ (CauseMatch, CauseTemplate,
	// CauseTokenizer, CauseTruncated); empty when nothing was compared.
	InputTokensCause string `json:"input_tokens_cause,omitempty"`
	// InputTokensOffset is the constant per-request gap of a template
	// offset, in tokens (+10 for Llama-3's chat template).
	InputTokensOffset float64 `json:"input_tokens_offset,omitempty"`
	// InputTokensTruncated prompts were cut by the server to
	// InputTokensTruncatedTo tokens; the longest the client sent was
	// InputTokensLongest.
	InputTokensTruncated   int64 `json:"input_tokens_truncated,omitempty"`
	InputTokensTruncatedTo int64 `json:"input_tokens_truncated_to,omitempty"`
	InputTokensLongest     int64 `json:"input_tokens_longest,omitempty"`
	// MaxTokensChecked successes reported their output length (usage) and
	// asked for a max_tokens; MaxTokensExceeded of them got more than
	// they asked for: the server ignored max_tokens.
	MaxTokensChecked  int64 `json:"max_tokens_checked"`
	MaxTokensExceeded int64 `json:"max_tokens_exceeded"`
}

// EncodeSummary writes s as indented JSON with a trailing newline: the exact
// bytes of summary.json.
func EncodeSummary(w io.Writer, s *Summary) error {
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return fmt.Errorf("encode summary: %w", err)
	}
	if _, err := w.Write(append(b, '\n')); err != nil {
		return fmt.Errorf("write summary: %w", err)
	}
	return nil
}

// SegmentFigures are one segment's requests in a merged run: what that
// machine sent and how it fared, to tell a lagging or failing machine.
type SegmentFigures struct {
	// Segment is "I/N".
	Segment     string   `json:"segment"`
	Requests    Requests `json:"requests"`
	FailureRate float64  `json:"failure_rate"`
}

// SegmentOf is the segment (0-based, of count) a request ID of a merged
// run belongs to: IDs are run-wide request numbers, the low 32 bits within
// a stage (schedule.Segment, experiment's segmented stage bases), striped
// over the segments.
func SegmentOf(id uint64, count int) int {
	return int((id & (1<<32 - 1)) % uint64(count))
}
