// Package otel is baton's OpenTelemetry adapter: an observe.Observer that
// records the events of baton's Locker, Scheduler and rate Limiter as
// metrics and spans. It is its own Go module, so the core module does not
// depend on OpenTelemetry.
//
// Setup is two lines:
//
//	obs, err := otel.New(nil) // the global MeterProvider and TracerProvider
//	sched, err := scheduler.New(provider, &scheduler.Config{Observer: obs})
//
// and the same obs in baton.Config.Observer and ratelimit.Config.Observer.
//
// Metrics (instrumentation scope ScopeName) are named baton.lock.*,
// baton.job.* and baton.ratelimit.*, durations in seconds; their
// attributes are the lock, job or policy name and the outcome, never a
// rate-limit key, a token or a tick. Spans: baton.lock.acquire,
// baton.lock.extend and baton.lock.release for the Locker; per tick of a
// locked job, baton.job.tick with children baton.job.claim, baton.job.run
// and baton.lock.release; baton.ratelimit.decision. The job function runs
// with the context of its baton.job.run span, so the spans it starts nest
// under it. docs/operations.md lists every metric, attribute and span.
package otel
