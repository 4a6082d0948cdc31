// Package prometheus is baton's Prometheus adapter: a Collector that
// turns the events of baton's Locker, Scheduler and rate Limiter into
// client_golang metrics. It is its own Go module, so the core module does
// not depend on the Prometheus client.
//
// Setup is two lines and an error check:
//
//	obs, err := prometheus.New(nil)
//	registry.MustRegister(obs) // then Config{Observer: obs} for the Locker and Scheduler
//
// and the same obs in ratelimit.Config.Observer.
//
// Metrics are named baton_lock_*, baton_job_* and baton_ratelimit_*,
// durations in seconds; labels are lock_name, job_name, policy, outcome
// and reason, never a rate-limit key. For alerting,
// baton_job_last_success_timestamp_seconds{job_name} is the end of the
// latest successful run of each job on this instance: take the max over
// instances and compare it with time() (see docs/operations.md for rules
// and every metric).
package prometheus
