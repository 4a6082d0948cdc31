// Package observe is baton's telemetry hook: one Observer interface that
// the Locker (package baton), the Scheduler (package scheduler) and the
// rate Limiter (package ratelimit) report their events to. It depends on
// the standard library only; the OpenTelemetry and Prometheus adapters
// live in their own modules (contrib/otel, contrib/prometheus), so the
// core module gains no dependency.
//
// An Observer has one method, Observe, taking an Event whose Kind says what
// happened. New kinds can be added without breaking an implementation: an
// observer ignores the kinds it does not know.
//
// Most events report an operation that has ended and carry its Start and
// Duration, so an adapter can record a histogram or a span after the
// fact. Two kinds begin work that others run under: JobAttempt (a locked
// job's tick: claim, run, release) and JobStarted (the job function).
// Their Observe may return a derived context, for instance carrying a
// span; the scheduler runs what follows with it, so the spans a job starts
// from its context nest under the run, and reports the matching end event
// (JobDone, JobFinished) with it.
//
// Leaving the observer unset costs nothing: every call site checks for nil
// before it builds an event, and no event is allocated on the heap.
//
// Label cardinality: the names in events (lock and job names, rate-limit
// policy names) are fixed by the program, so adapters may use them as
// metric labels. Rate-limit keys are data and never appear in an Event.
package observe
