package otel

import (
	"context"
	"sync"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/baton-go/baton/observe"
)

// ScopeName is the instrumentation scope of the meter and the tracer.
const ScopeName = "github.com/baton-go/baton/contrib/otel"

// Attribute keys of the metrics and spans.
const (
	AttrLock       = attribute.Key("baton.lock.name")
	AttrJob        = attribute.Key("baton.job.name")
	AttrOutcome    = attribute.Key("baton.outcome")
	AttrSkipReason = attribute.Key("baton.skip.reason")
	AttrPolicy     = attribute.Key("baton.ratelimit.policy")
	// Span attributes only: their values are data, not labels.
	AttrToken      = attribute.Key("baton.lock.token")
	AttrTick       = attribute.Key("baton.job.tick")
	AttrCatchUp    = attribute.Key("baton.job.catch_up")
	AttrRetryAfter = attribute.Key("baton.ratelimit.retry_after")
	AttrCost       = attribute.Key("baton.ratelimit.cost")
)

// Config configures an Observer. The zero value (or a nil *Config) means
// the documented defaults.
type Config struct {
	// MeterProvider makes the instruments; nil means the global one
	// (otel.GetMeterProvider).
	MeterProvider metric.MeterProvider
	// TracerProvider makes the spans; nil means the global one
	// (otel.GetTracerProvider).
	TracerProvider trace.TracerProvider
	// RootSpans makes spans for lock and rate-limit operations whose
	// context carries no recording span. Off by default: a lock cycle or
	// a rate decision is traced as part of the request or job that made
	// it, and not as a trace of its own (on a busy service, a root span
	// per decision would swamp the traces and cost more than the
	// decision's own client work). The spans of a scheduler's ticks and
	// runs are made either way.
	RootSpans bool
}

// Observer turns baton's events into OpenTelemetry metrics and spans. It
// implements observe.Observer; one Observer may serve any number of
// Lockers, Schedulers and Limiters. Safe for concurrent use.
type Observer struct {
	tracer    trace.Tracer
	rootSpans bool
	m         instruments

	attrs sync.Map // attrKey -> *opts; see opt
}

type instruments struct {
	lockAttempts, lockExtends, lockLosses, lockReleases metric.Int64Counter
	lockWait                                            metric.Float64Histogram

	jobClaim                                      metric.Float64Histogram
	jobSkips, jobRuns, jobLockLosses, jobCatchUps metric.Int64Counter
	jobRun                                        metric.Float64Histogram
	jobActive                                     metric.Int64UpDownCounter
	jobLastSuccess                                metric.Float64Gauge

	rateErrors, rateFallbacks    metric.Int64Counter
	rateDecision, rateRetryAfter metric.Float64Histogram
}

// New returns an Observer that records on cfg's providers.
func New(cfg *Config) (*Observer, error) {
	var c Config
	if cfg != nil {
		c = *cfg
	}
	if c.MeterProvider == nil {
		c.MeterProvider = otel.GetMeterProvider()
	}
	if c.TracerProvider == nil {
		c.TracerProvider = otel.GetTracerProvider()
	}
	o := &Observer{
		tracer:    c.TracerProvider.Tracer(ScopeName),
		rootSpans: c.RootSpans,
	}
	m := c.MeterProvider.Meter(ScopeName)
	var errs []error
	counter := func(name, unit, desc string) metric.Int64Counter {
		i, err := m.Int64Counter(name, metric.WithUnit(unit), metric.WithDescription(desc))
		errs = append(errs, err)
		return i
	}
	seconds := func(name, desc string, bounds ...float64) metric.Float64Histogram {
		i, err := m.Float64Histogram(name, metric.WithUnit("s"), metric.WithDescription(desc),
			metric.WithExplicitBucketBoundaries(bounds...))
		errs = append(errs, err)
		return i
	}
	o.m.lockAttempts = counter("baton.lock.attempts", "{attempt}", "Acquire calls to the provider, by outcome.")
	o.m.lockWait = seconds("baton.lock.wait.duration", "Time from a TryAcquire or Acquire call to its grant or refusal, by outcome; its count counts them.", waitBuckets...)
	o.m.lockExtends = counter("baton.lock.extends", "{extend}", "Lease extensions (Extend and auto-renewals), by outcome.")
	o.m.lockLosses = counter("baton.lock.losses", "{loss}", "Held leases lost before their release.")
	o.m.lockReleases = counter("baton.lock.releases", "{release}", "Lease releases, by outcome.")
	o.m.jobClaim = seconds("baton.job.claim.duration", "Latency of a scheduled job's claim of its tick, by outcome.", waitBuckets...)
	o.m.jobSkips = counter("baton.job.skips", "{tick}", "Ticks this instance did not run, by reason.")
	o.m.jobRuns = counter("baton.job.runs", "{run}", "Job runs, by outcome.")
	o.m.jobRun = seconds("baton.job.run.duration", "Duration of job runs, by outcome.", runBuckets...)
	o.m.jobLockLosses = counter("baton.job.lock.losses", "{loss}", "Job runs whose lease was lost while they ran.")
	o.m.jobCatchUps = counter("baton.job.catch_ups", "{tick}", "Missed ticks found at start-up, by outcome.")
	active, err := m.Int64UpDownCounter("baton.job.active", metric.WithUnit("{run}"), metric.WithDescription("Job runs in progress on this instance."))
	errs = append(errs, err)
	o.m.jobActive = active
	last, err := m.Float64Gauge("baton.job.last_success", metric.WithUnit("s"),
		metric.WithDescription("End of the latest successful run, in seconds since the Unix epoch."))
	errs = append(errs, err)
	o.m.jobLastSuccess = last
	o.m.rateDecision = seconds("baton.ratelimit.decision.duration", "Round trip of a rate-limit decision, by policy and outcome; its count counts them.", waitBuckets...)
	o.m.rateRetryAfter = seconds("baton.ratelimit.retry_after", "Retry-after of denied requests.", retryBuckets...)
	o.m.rateErrors = counter("baton.ratelimit.errors", "{error}", "Rate-limit provider failures.")
	o.m.rateFallbacks = counter("baton.ratelimit.fallbacks", "{request}", "Requests the HTTP middleware passed (fail_open) or refused (fail_closed) without a decision.")
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return o, nil
}

// Histogram buckets, in seconds: round trips and waits from 100µs, runs
// from 10ms to an hour, retry-afters from 10ms to a day.
var (
	waitBuckets  = []float64{0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30}
	runBuckets   = []float64{0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30, 60, 300, 600, 1800, 3600}
	retryBuckets = []float64{0.01, 0.1, 0.5, 1, 5, 10, 60, 300, 3600, 86400}
)

// Observe records e. For observe.JobAttempt and observe.JobStarted it
// starts a span and returns ctx carrying it; the matching JobDone and
// JobFinished end the span found in their context.
func (o *Observer) Observe(ctx context.Context, e observe.Event) context.Context {
	switch e.Kind {
	case observe.LockAttempt:
		o.m.lockAttempts.Add(ctx, 1, o.opt(AttrLock, e.Name, e.Outcome).add...)
	case observe.LockAcquired, observe.LockRefused:
		o.m.lockWait.Record(ctx, e.Duration.Seconds(), o.opt(AttrLock, e.Name, e.Outcome).record...)
		o.span(ctx, "baton.lock.acquire", e, e.Kind == observe.LockRefused && e.Outcome != observe.OutcomeRefused)
	case observe.LockExtended:
		o.m.lockExtends.Add(ctx, 1, o.opt(AttrLock, e.Name, e.Outcome).add...)
		o.span(ctx, "baton.lock.extend", e, e.Err != nil)
	case observe.LockLost:
		o.m.lockLosses.Add(ctx, 1, o.opt(AttrLock, e.Name, "").add...)
		o.event(ctx, "baton.lock.lost", e)
	case observe.LockReleased:
		o.m.lockReleases.Add(ctx, 1, o.opt(AttrLock, e.Name, e.Outcome).add...)
		o.span(ctx, "baton.lock.release", e, e.Err != nil)

	case observe.JobAttempt:
		ctx = o.begin(ctx, "baton.job.tick", e)
	case observe.JobClaimed, observe.JobClaimFailed:
		o.m.jobClaim.Record(ctx, e.Duration.Seconds(), o.opt(AttrJob, e.Job, e.Outcome).record...)
		o.span(ctx, "baton.job.claim", e, e.Kind == observe.JobClaimFailed)
	case observe.JobSkipped:
		if !e.Start.IsZero() { // a claim was made
			o.m.jobClaim.Record(ctx, e.Duration.Seconds(), o.opt(AttrJob, e.Job, observe.OutcomeSkipped).record...)
			o.span(ctx, "baton.job.claim", e, false)
		}
		o.m.jobSkips.Add(ctx, 1, o.optKey(AttrJob, e.Job, AttrSkipReason, e.Outcome).add...)
	case observe.JobStarted:
		o.m.jobActive.Add(ctx, 1, o.opt(AttrJob, e.Job, "").add...)
		ctx = o.begin(ctx, "baton.job.run", e)
	case observe.JobFinished:
		opt := o.opt(AttrJob, e.Job, e.Outcome)
		o.m.jobActive.Add(ctx, -1, o.opt(AttrJob, e.Job, "").add...)
		o.m.jobRuns.Add(ctx, 1, opt.add...)
		o.m.jobRun.Record(ctx, e.Duration.Seconds(), opt.record...)
		if e.Outcome == observe.OutcomeSucceeded {
			o.m.jobLastSuccess.Record(ctx, unixSeconds(e.End()), o.opt(AttrJob, e.Job, "").record...)
		}
		o.end(ctx, e)
	case observe.JobLockLost:
		o.m.jobLockLosses.Add(ctx, 1, o.opt(AttrJob, e.Job, "").add...)
	case observe.JobCatchUp:
		o.m.jobCatchUps.Add(ctx, 1, o.opt(AttrJob, e.Job, e.Outcome).add...)
		o.event(ctx, "baton.job.catch_up", e)
	case observe.JobDone:
		o.end(ctx, e)

	case observe.RateDecision:
		o.m.rateDecision.Record(ctx, e.Duration.Seconds(), o.opt(AttrPolicy, e.Policy, e.Outcome).record...)
		if e.Outcome == observe.OutcomeDenied {
			o.m.rateRetryAfter.Record(ctx, e.RetryAfter.Seconds(), o.opt(AttrPolicy, e.Policy, "").record...)
		}
		o.span(ctx, "baton.ratelimit.decision", e, false)
	case observe.RateError:
		o.m.rateErrors.Add(ctx, 1, o.opt(AttrPolicy, e.Policy, "").add...)
		o.span(ctx, "baton.ratelimit.decision", e, true)
	case observe.RateFallback:
		o.m.rateFallbacks.Add(ctx, 1, o.opt(AttrPolicy, e.Policy, e.Outcome).add...)
		o.event(ctx, "baton.ratelimit.fallback", e)
	}
	return ctx
}

// span records a span for an operation that has ended, from e.Start to
// its end, under the span in ctx; without a recording span there, only
// if Config.RootSpans asks for it.
func (o *Observer) span(ctx context.Context, name string, e observe.Event, failed bool) {
	if !o.rootSpans && !trace.SpanFromContext(ctx).IsRecording() {
		return
	}
	_, s := o.tracer.Start(ctx, name, trace.WithTimestamp(e.Start), trace.WithAttributes(spanAttrs(e)...))
	if s.IsRecording() {
		s.SetAttributes(AttrOutcome.String(e.Outcome))
		if failed && e.Err != nil {
			s.RecordError(e.Err)
			s.SetStatus(codes.Error, e.Outcome)
		}
	}
	s.End(trace.WithTimestamp(e.End()))
}

// event adds a span event for e to the span in ctx, if it records.
func (o *Observer) event(ctx context.Context, name string, e observe.Event) {
	s := trace.SpanFromContext(ctx)
	if !s.IsRecording() {
		return
	}
	attrs := spanAttrs(e)
	if e.Outcome != "" {
		attrs = append(attrs, AttrOutcome.String(e.Outcome))
	}
	if e.Err != nil {
		attrs = append(attrs, attribute.String("exception.message", e.Err.Error()))
	}
	s.AddEvent(name, trace.WithAttributes(attrs...))
}

// spanKey keys the span an Observer began in the context it returned:
// another tracing observer joined after this one may put its own span in
// front of it.
type spanKey struct{ o *Observer }

// begin starts the span of a begin event and returns ctx carrying it.
func (o *Observer) begin(ctx context.Context, name string, e observe.Event) context.Context {
	ctx, s := o.tracer.Start(ctx, name, trace.WithAttributes(jobAttrs(e)...))
	return context.WithValue(ctx, spanKey{o}, s)
}

// end ends the span begun for the event that e ends, found in ctx.
func (o *Observer) end(ctx context.Context, e observe.Event) {
	s, ok := ctx.Value(spanKey{o}).(trace.Span)
	if !ok || !s.IsRecording() {
		return
	}
	s.SetAttributes(AttrOutcome.String(e.Outcome))
	if e.Token != 0 {
		s.SetAttributes(AttrToken.Int64(e.Token))
	}
	switch e.Outcome {
	case observe.OutcomeSucceeded, observe.OutcomeSkipped:
	default:
		if e.Err != nil {
			s.RecordError(e.Err)
		}
		s.SetStatus(codes.Error, e.Outcome)
	}
	s.End()
}

func jobAttrs(e observe.Event) []attribute.KeyValue {
	a := []attribute.KeyValue{AttrJob.String(e.Job), AttrTick.String(e.Tick.UTC().Format(time.RFC3339Nano))}
	if e.Name != "" {
		a = append(a, AttrLock.String(e.Name))
	}
	if e.CatchUp {
		a = append(a, AttrCatchUp.Bool(true))
	}
	return a
}

func spanAttrs(e observe.Event) []attribute.KeyValue {
	var a []attribute.KeyValue
	if e.Job != "" {
		a = jobAttrs(e)
	} else if e.Name != "" {
		a = append(a, AttrLock.String(e.Name))
	}
	if e.Token != 0 {
		a = append(a, AttrToken.Int64(e.Token))
	}
	if e.Policy != "" {
		a = append(a, AttrPolicy.String(e.Policy), AttrCost.Int64(e.Cost))
	}
	if e.RetryAfter > 0 {
		a = append(a, AttrRetryAfter.Float64(e.RetryAfter.Seconds()))
	}
	if e.Outcome == observe.OutcomeHeld || e.Outcome == observe.OutcomeStaleTick || e.Outcome == observe.OutcomeStillRunning {
		a = append(a, AttrSkipReason.String(e.Outcome))
	}
	return a
}

func unixSeconds(t time.Time) float64 { return float64(t.UnixNano()) / 1e9 }

// attrKey identifies a cached attribute set: a name (lock, job or policy)
// and an outcome under their keys.
type attrKey struct {
	nameKey, outKey attribute.Key
	name, outcome   string
}

// opts are the options of one attribute set, as the slices the
// instruments' variadic parameters take, so that passing them allocates
// nothing.
type opts struct {
	add    []metric.AddOption
	record []metric.RecordOption
}

// opt returns the options for name under key and outcome (if not empty)
// under AttrOutcome, made once per pair: the names are fixed by the
// program, so the cache stays small, and recording allocates nothing
// after the first time.
func (o *Observer) opt(key attribute.Key, name, outcome string) *opts {
	return o.optKey(key, name, AttrOutcome, outcome)
}

func (o *Observer) optKey(key attribute.Key, name string, outKey attribute.Key, outcome string) *opts {
	k := attrKey{key, outKey, name, outcome}
	if v, ok := o.attrs.Load(k); ok {
		return v.(*opts)
	}
	kvs := []attribute.KeyValue{key.String(name)}
	if outcome != "" {
		kvs = append(kvs, outKey.String(outcome))
	}
	opt := metric.WithAttributeSet(attribute.NewSet(kvs...))
	v, _ := o.attrs.LoadOrStore(k, &opts{add: []metric.AddOption{opt}, record: []metric.RecordOption{opt}})
	return v.(*opts)
}
