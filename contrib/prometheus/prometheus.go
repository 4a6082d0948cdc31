package prometheus

import (
	"context"
	"slices"
	"strconv"
	"strings"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/baton-go/baton/batontype"
	"github.com/baton-go/baton/observe"
)

// Label names. job_name rather than job: Prometheus gives every scraped
// series the scrape job's name as "job", and would rename a "job" label
// of ours to "exported_job".
const (
	LabelJob     = "job_name"
	LabelLock    = "lock_name"
	LabelPolicy  = "policy"
	LabelOutcome = "outcome"
	LabelReason  = "reason"
)

// Config configures a Collector. The zero value (or a nil *Config) means
// the documented defaults.
type Config struct {
	// Namespace prefixes every metric name. Empty means "baton".
	Namespace string
	// ConstLabels are added to every series (e.g. the service name). Nil
	// means none.
	ConstLabels prometheus.Labels
}

// Collector turns baton's events into Prometheus metrics. It implements
// observe.Observer, to be given to baton.Config.Observer,
// scheduler.Config.Observer and ratelimit.Config.Observer, and
// prometheus.Collector, to be registered once. Safe for concurrent use.
type Collector struct {
	lockAttempts, lockExtends, lockReleases *prometheus.CounterVec
	lockLosses                              *prometheus.CounterVec
	lockWait                                *prometheus.HistogramVec

	jobClaim                                  *prometheus.HistogramVec
	jobSkips, jobRuns, jobLosses, jobCatchUps *prometheus.CounterVec
	jobRun                                    *prometheus.HistogramVec
	jobActive, jobLastSuccess                 *prometheus.GaugeVec

	rateErrors, rateFallbacks    *prometheus.CounterVec
	rateDecision, rateRetryAfter *prometheus.HistogramVec

	all []prometheus.Collector
}

// Histogram buckets, in seconds: round trips and waits from 100µs, runs
// from 10ms to an hour, retry-afters from 10ms to a day.
var (
	waitBuckets  = []float64{0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30}
	runBuckets   = []float64{0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30, 60, 300, 600, 1800, 3600}
	retryBuckets = []float64{0.01, 0.1, 0.5, 1, 5, 10, 60, 300, 3600, 86400}
)

// New returns a Collector; register it with a prometheus.Registerer. It
// returns a *batontype.ValidationError (matching batontype.ErrInvalid) for
// a Namespace that cannot begin a metric name or a constant label whose
// name Prometheus would refuse or that collides with one of ours, rather
// than a Collector that fails at registration.
func New(cfg *Config) (*Collector, error) {
	var c Config
	if cfg != nil {
		c = *cfg
	}
	if c.Namespace == "" {
		c.Namespace = "baton"
	}
	if err := validate(c); err != nil {
		return nil, err
	}
	o := &Collector{}
	counter := func(name, help string, labels ...string) *prometheus.CounterVec {
		v := prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: c.Namespace, Name: name, Help: help, ConstLabels: c.ConstLabels}, labels)
		o.all = append(o.all, v)
		return v
	}
	histogram := func(name, help string, buckets []float64, labels ...string) *prometheus.HistogramVec {
		v := prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: c.Namespace, Name: name, Help: help, Buckets: buckets, ConstLabels: c.ConstLabels}, labels)
		o.all = append(o.all, v)
		return v
	}
	gauge := func(name, help string, labels ...string) *prometheus.GaugeVec {
		v := prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: c.Namespace, Name: name, Help: help, ConstLabels: c.ConstLabels}, labels)
		o.all = append(o.all, v)
		return v
	}
	o.lockAttempts = counter("lock_attempts_total", "Acquire calls to the provider, by outcome.", LabelLock, LabelOutcome)
	o.lockWait = histogram("lock_wait_duration_seconds", "Time from a TryAcquire or Acquire call to its grant or refusal, by outcome; its _count counts them.", waitBuckets, LabelLock, LabelOutcome)
	o.lockExtends = counter("lock_extends_total", "Lease extensions (Extend and auto-renewals), by outcome.", LabelLock, LabelOutcome)
	o.lockLosses = counter("lock_losses_total", "Held leases lost before their release.", LabelLock)
	o.lockReleases = counter("lock_releases_total", "Lease releases, by outcome.", LabelLock, LabelOutcome)
	o.jobClaim = histogram("job_claim_duration_seconds", "Latency of a scheduled job's claim of its tick, by outcome.", waitBuckets, LabelJob, LabelOutcome)
	o.jobSkips = counter("job_skips_total", "Ticks this instance did not run, by reason.", LabelJob, LabelReason)
	o.jobRuns = counter("job_runs_total", "Job runs, by outcome.", LabelJob, LabelOutcome)
	o.jobRun = histogram("job_run_duration_seconds", "Duration of job runs, by outcome.", runBuckets, LabelJob, LabelOutcome)
	o.jobLosses = counter("job_lock_losses_total", "Job runs whose lease was lost while they ran.", LabelJob)
	o.jobCatchUps = counter("job_catch_ups_total", "Missed ticks found at start-up, by outcome.", LabelJob, LabelOutcome)
	o.jobActive = gauge("job_active", "Job runs in progress on this instance.", LabelJob)
	o.jobLastSuccess = gauge("job_last_success_timestamp_seconds", "End of the latest successful run on this instance, in seconds since the Unix epoch.", LabelJob)
	o.rateDecision = histogram("ratelimit_decision_duration_seconds", "Round trip of a rate-limit decision, by policy and outcome; its _count counts them.", waitBuckets, LabelPolicy, LabelOutcome)
	o.rateRetryAfter = histogram("ratelimit_retry_after_seconds", "Retry-after of denied requests.", retryBuckets, LabelPolicy)
	o.rateErrors = counter("ratelimit_errors_total", "Rate-limit provider failures.", LabelPolicy)
	o.rateFallbacks = counter("ratelimit_fallbacks_total", "Requests the HTTP middleware passed (fail_open) or refused (fail_closed) without a decision.", LabelPolicy, LabelOutcome)
	return o, nil
}

// Describe sends the descriptors of every metric.
func (o *Collector) Describe(ch chan<- *prometheus.Desc) {
	for _, c := range o.all {
		c.Describe(ch)
	}
}

// Collect sends every series.
func (o *Collector) Collect(ch chan<- prometheus.Metric) {
	for _, c := range o.all {
		c.Collect(ch)
	}
}

// Observe records e and returns ctx.
func (o *Collector) Observe(ctx context.Context, e observe.Event) context.Context {
	switch e.Kind {
	case observe.LockAttempt:
		o.lockAttempts.WithLabelValues(e.Name, e.Outcome).Inc()
	case observe.LockAcquired, observe.LockRefused:
		o.lockWait.WithLabelValues(e.Name, e.Outcome).Observe(e.Duration.Seconds())
	case observe.LockExtended:
		o.lockExtends.WithLabelValues(e.Name, e.Outcome).Inc()
	case observe.LockLost:
		o.lockLosses.WithLabelValues(e.Name).Inc()
	case observe.LockReleased:
		o.lockReleases.WithLabelValues(e.Name, e.Outcome).Inc()

	case observe.JobClaimed, observe.JobClaimFailed:
		o.jobClaim.WithLabelValues(e.Job, e.Outcome).Observe(e.Duration.Seconds())
	case observe.JobSkipped:
		if !e.Start.IsZero() { // a claim was made
			o.jobClaim.WithLabelValues(e.Job, observe.OutcomeSkipped).Observe(e.Duration.Seconds())
		}
		o.jobSkips.WithLabelValues(e.Job, e.Outcome).Inc()
	case observe.JobStarted:
		o.jobActive.WithLabelValues(e.Job).Inc()
	case observe.JobFinished:
		o.jobActive.WithLabelValues(e.Job).Dec()
		o.jobRuns.WithLabelValues(e.Job, e.Outcome).Inc()
		o.jobRun.WithLabelValues(e.Job, e.Outcome).Observe(e.Duration.Seconds())
		if e.Outcome == observe.OutcomeSucceeded {
			o.jobLastSuccess.WithLabelValues(e.Job).Set(float64(e.End().UnixNano()) / 1e9)
		}
	case observe.JobLockLost:
		o.jobLosses.WithLabelValues(e.Job).Inc()
	case observe.JobCatchUp:
		o.jobCatchUps.WithLabelValues(e.Job, e.Outcome).Inc()

	case observe.RateDecision:
		o.rateDecision.WithLabelValues(e.Policy, e.Outcome).Observe(e.Duration.Seconds())
		if e.Outcome == observe.OutcomeDenied {
			o.rateRetryAfter.WithLabelValues(e.Policy).Observe(e.RetryAfter.Seconds())
		}
	case observe.RateError:
		o.rateErrors.WithLabelValues(e.Policy).Inc()
	case observe.RateFallback:
		o.rateFallbacks.WithLabelValues(e.Policy, e.Outcome).Inc()
	}
	return ctx
}

// validate checks what Prometheus would otherwise refuse only when the
// Collector is registered.
func validate(c Config) error {
	if !validName(c.Namespace, true) {
		return &batontype.ValidationError{Pkg: "prometheus", Field: "Namespace", Value: strconv.Quote(c.Namespace),
			Reason: "must be a metric name prefix: a letter, '_' or ':' then letters, digits, '_' or ':'", Err: batontype.ErrInvalid}
	}
	for name := range c.ConstLabels {
		switch {
		case !validName(name, false) || strings.HasPrefix(name, "__"):
			return &batontype.ValidationError{Pkg: "prometheus", Field: "ConstLabels", Value: strconv.Quote(name),
				Reason: "must be a label name: a letter or '_' then letters, digits or '_', not starting with \"__\"", Err: batontype.ErrInvalid}
		case slices.Contains([]string{LabelJob, LabelLock, LabelPolicy, LabelOutcome, LabelReason}, name):
			return &batontype.ValidationError{Pkg: "prometheus", Field: "ConstLabels", Value: strconv.Quote(name),
				Reason: "is a label the collector sets itself", Err: batontype.ErrInvalid}
		}
	}
	return nil
}

// validName reports whether s is a metric name (colons allowed) or a
// label name.
func validName(s string, metric bool) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		ok := r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || (metric && r == ':') || (i > 0 && r >= '0' && r <= '9')
		if !ok {
			return false
		}
	}
	return true
}
