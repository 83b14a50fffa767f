package plan

import (
	"time"

	"github.com/inferload/inferload/protocol"
	"github.com/inferload/inferload/schedule"
)

// Defaults for fields left unset. docs/plan.md documents each; the flags'
// help shows them too. A default that a lower package also applies to its
// own zero value (the engine's grace, the client's connect timeout) is
// one constant in the lowest package that applies it (schedule's grace,
// the protocol's connect timeout), so the two cannot drift apart.
const (
	DefaultName           = "run"
	DefaultAPI            = "chat"
	DefaultStream         = true
	DefaultIncludeUsage   = true
	DefaultPreflight      = true
	DefaultTraceContext   = true
	DefaultKernelStamps   = true
	DefaultIgnoreEOS      = true
	DefaultObserveGPU     = true
	DefaultConnectTimeout = protocol.DefaultConnectTimeout
	DefaultTTFTTimeout    = 60 * time.Second
	DefaultTotalTimeout   = 10 * time.Minute
	DefaultGrace          = schedule.DefaultGrace
	DefaultLateAfter      = 10 * time.Millisecond
	DefaultArrival        = schedule.Poisson
	DefaultBurstiness     = 1.0
	DefaultSeed           = 1
	DefaultInputTokens    = "512"
	DefaultOutputTokens   = "128"
	DefaultOutputDir      = "runs"
	// DefaultDuration applies when neither load.duration nor load.requests
	// is set: a minute is long enough for stable percentiles at typical
	// rates and short enough that a forgotten option costs little.
	DefaultDuration = time.Minute
	// DefaultOTLPWait is how long a run that listens for OTLP spans waits
	// for the last ones: twice the 5 s an OpenTelemetry SDK's batch span
	// processor holds spans by default, so vLLM's last batch arrives. The
	// wait ends as soon as every successful request has its span.
	DefaultOTLPWait = 10 * time.Second
)

// ApplyDefaults fills every unset field with its default. Open-loop-only
// fields (arrival, late_after) get defaults only in open-loop plans, and
// burstiness only with gamma arrivals, so the resolved plan shows exactly
// the options that take effect.
func (p *Plan) ApplyDefaults() {
	setIfZero(&p.Name, DefaultName)
	p.Target.applyDefaults()
	_, durationSet := p.origin["load.duration"]
	p.Load.applyDefaults(durationSet)
	p.Workload.applyDefaults()
	if p.Observe.OTLPListen != "" {
		setIfZero(&p.Observe.OTLPWait, DefaultOTLPWait)
	}
	setIfZero(&p.Output.Dir, DefaultOutputDir)
}

func (t *Target) applyDefaults() {
	setIfZero(&t.API, DefaultAPI)
	setIfNil(&t.Stream, DefaultStream)
	setIfNil(&t.IncludeUsage, DefaultIncludeUsage)
	setIfZero(&t.Timeouts.Connect, DefaultConnectTimeout)
	setIfZero(&t.Timeouts.TTFT, DefaultTTFTTimeout)
	setIfZero(&t.Timeouts.Total, DefaultTotalTimeout)
}

func (l *LoadOptions) applyDefaults(durationSet bool) {
	// A trace that plays once ends by itself: the run stops with its last
	// request (experiment caps it at the trace's length). A duration the
	// user wrote as 0 gets no default: validation says 0 is no duration.
	if l.Duration == 0 && l.Requests == 0 && !l.PlaysOnce() && !durationSet {
		l.Duration = DefaultDuration
	}
	setIfZero(&l.Grace, DefaultGrace)
	if l.scheduled() {
		setIfZero(&l.Arrival, DefaultArrival)
	}
	if l.OpenLoop() {
		setIfZero(&l.LateAfter, DefaultLateAfter)
	}
	if l.Shape() == ShapeTrace {
		setIfZero(&l.Trace.Speed, 1)
	}
	if l.Arrival == schedule.Gamma {
		setIfZero(&l.Burstiness, DefaultBurstiness)
	}
}

// Streams reports whether replies are asked for as a stream: target.stream,
// DefaultStream when unset (a plan built in code need not call
// ApplyDefaults).
func (t *Target) Streams() bool { return boolOr(t.Stream, DefaultStream) }

// IncludesUsage reports whether a stream asks for usage
// (target.include_usage, DefaultIncludeUsage when unset).
func (t *Target) IncludesUsage() bool { return boolOr(t.IncludeUsage, DefaultIncludeUsage) }

// TracesContext reports whether requests carry a traceparent and an
// x-request-id (target.trace_context, DefaultTraceContext when unset).
func (t *Target) TracesContext() bool { return boolOr(t.TraceContext, DefaultTraceContext) }

// KernelStamps reports whether token events are stamped with the kernel's
// receive timestamps where supported (target.kernel_timestamps,
// DefaultKernelStamps when unset). Never on HTTP/2: a connection's reads
// carry frames of many streams, so a read's stamp is no stream's own.
func (t *Target) KernelStamps() bool {
	return t.HTTP2 == "" && boolOr(t.KernelTimestamps, DefaultKernelStamps)
}

// Preflights reports whether a probe request is sent before the load
// starts (target.preflight, DefaultPreflight when unset).

func (t *Target) Preflights() bool { return boolOr(t.Preflight, DefaultPreflight) }

// GPUs reports whether local GPUs are sampled (observe.gpu,
// DefaultObserveGPU when unset).
func (o *Observe) GPUs() bool { return boolOr(o.GPU, DefaultObserveGPU) }

// setIfZero sets *field to def when it holds its zero value.
func setIfZero[T comparable](field *T, def T) {
	var zero T
	if *field == zero {
		*field = def
	}
}

// setIfNil points *field at def when it is nil (an unset bool option).
func setIfNil(field **bool, def bool) {
	if *field == nil {
		*field = &def
	}
}
