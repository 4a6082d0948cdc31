package prometheus_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/baton-go/baton/batontype"
	batonprom "github.com/baton-go/baton/contrib/prometheus"
	"github.com/baton-go/baton/internal/telemetrytest"
	"github.com/baton-go/baton/observe"
)

// The shared scenario on Redis and PostgreSQL, one Collector and registry
// per instance, each scraped over HTTP as Prometheus would: summed over
// the instances, the series count every run by outcome, every skip and
// claim, the loss, the Locker's lock and the rate decisions; the last
// success gauge is set for the job that succeeded, on the instance that
// ran it, and nowhere else.
func TestScenario(t *testing.T) {
	for _, backend := range telemetrytest.Backends {
		t.Run(backend, func(t *testing.T) {
			var servers []*httptest.Server
			var collectors []observe.Observer
			for range telemetrytest.Instances {
				c, err := batonprom.New(&batonprom.Config{ConstLabels: prometheus.Labels{"service": "test"}})
				if err != nil {
					t.Fatal(err)
				}
				reg := prometheus.NewPedanticRegistry()
				reg.MustRegister(c)
				srv := httptest.NewServer(promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
				t.Cleanup(srv.Close)
				servers, collectors = append(servers, srv), append(collectors, c)
			}
			res := telemetrytest.Run(t, backend, func(i int) observe.Observer { return collectors[i] }, func(context.Context, string) {})
			var scrapes []map[string]*dto.MetricFamily
			for _, srv := range servers {
				scrapes = append(scrapes, scrape(t, srv.URL))
			}
			total := func(name string, labels ...string) float64 {
				var v float64
				for _, s := range scrapes {
					v += value(s, name, labels...)
				}
				return v
			}
			for job, outcome := range telemetrytest.Jobs {
				if got := total("baton_job_runs_total", "job_name", job, "outcome", outcome); got != 1 {
					t.Errorf("baton_job_runs_total{job_name=%q,outcome=%q} = %v, want 1", job, outcome, got)
				}
				if got := total("baton_job_runs_total", "job_name", job); got != 1 {
					t.Errorf("baton_job_runs_total{job_name=%q} = %v, want 1", job, got)
				}
				if got := total("baton_job_skips_total", "job_name", job); got != telemetrytest.Instances-1 {
					t.Errorf("baton_job_skips_total{job_name=%q} = %v, want %d", job, got, telemetrytest.Instances-1)
				}
				if got := total("baton_job_claim_duration_seconds", "job_name", job); got != telemetrytest.Instances {
					t.Errorf("claims of %s = %v, want %d", job, got, telemetrytest.Instances)
				}
				winner := scrapes[res.Winner[job]]
				if got := value(winner, "baton_job_run_duration_seconds", "job_name", job, "outcome", outcome); got != 1 {
					t.Errorf("the winner of %s has %v runs in its histogram, want 1", job, got)
				}
				if got := total("baton_job_active", "job_name", job); got != 0 {
					t.Errorf("baton_job_active{job_name=%q} = %v after the run", job, got)
				}
				for i, s := range scrapes {
					last, ok := gauge(s, "baton_job_last_success_timestamp_seconds", "job_name", job)
					wantSet := job == telemetrytest.JobOK && i == res.Winner[job]
					if ok != wantSet {
						t.Errorf("instance %d: last success of %s set %v, want %v", i, job, ok, wantSet)
					}
					if at := time.Unix(0, int64(last*1e9)); ok && (at.Before(res.Tick) || at.After(time.Now())) {
						t.Errorf("last success of %s = %v, want between the tick %v and now", job, at, res.Tick)
					}
				}
			}
			if got := total("baton_job_lock_losses_total", "job_name", telemetrytest.JobLost); got != 1 {
				t.Errorf("baton_job_lock_losses_total = %v, want 1", got)
			}
			if got := total("baton_lock_losses_total", "lock_name", telemetrytest.JobLost); got != 1 {
				t.Errorf("baton_lock_losses_total = %v, want 1", got)
			}
			for _, c := range []struct {
				name, outcome string
				want          float64
			}{
				{"baton_lock_wait_duration_seconds", observe.OutcomeRefused, 1},
				{"baton_lock_attempts_total", observe.OutcomeRefused, 1},
				{"baton_lock_wait_duration_seconds", observe.OutcomeGranted, 1},
				{"baton_lock_releases_total", observe.OutcomeOK, 1},
			} {
				if got := total(c.name, "lock_name", telemetrytest.Lock, "outcome", c.outcome); got != c.want {
					t.Errorf("%s{lock_name=%q,outcome=%q} = %v, want %v", c.name, telemetrytest.Lock, c.outcome, got, c.want)
				}
			}
			if got := total("baton_ratelimit_decision_duration_seconds", "policy", telemetrytest.Policy, "outcome", "allowed"); got != 2 {
				t.Errorf("allowed decisions = %v, want 2", got)
			}
			if got := total("baton_ratelimit_decision_duration_seconds", "policy", telemetrytest.Policy, "outcome", "denied"); got != 1 {
				t.Errorf("denied decisions = %v, want 1", got)
			}
			if got := total("baton_ratelimit_retry_after_seconds", "policy", telemetrytest.Policy); got != 1 {
				t.Errorf("retry-after observations = %v, want 1", got)
			}
			for _, s := range scrapes {
				for name, mf := range s {
					for _, m := range mf.GetMetric() {
						for _, l := range m.GetLabel() {
							if l.GetName() == "key" || l.GetName() == "job" || l.GetName() == "token" || l.GetName() == "tick" {
								t.Errorf("%s has a %q label: unbounded or reserved", name, l.GetName())
							}
						}
					}
				}
			}
		})
	}
}

// scrape GETs url as Prometheus does and parses the text exposition.
func scrape(t *testing.T, url string) map[string]*dto.MetricFamily {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", "text/plain; version=0.0.4")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("scrape: %s", resp.Status)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	mfs, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return mfs
}

// value is the sum over the series of name with the labels given as
// name, value pairs: counter values, gauge values or histogram counts.
func value(mfs map[string]*dto.MetricFamily, name string, labels ...string) float64 {
	var v float64
	for _, m := range series(mfs, name, labels...) {
		switch {
		case m.Counter != nil:
			v += m.GetCounter().GetValue()
		case m.Gauge != nil:
			v += m.GetGauge().GetValue()
		case m.Histogram != nil:
			v += float64(m.GetHistogram().GetSampleCount())
		}
	}
	return v
}

func gauge(mfs map[string]*dto.MetricFamily, name string, labels ...string) (float64, bool) {
	s := series(mfs, name, labels...)
	if len(s) != 1 {
		return 0, false
	}
	return s[0].GetGauge().GetValue(), true
}

func series(mfs map[string]*dto.MetricFamily, name string, labels ...string) []*dto.Metric {
	var out []*dto.Metric
	for _, m := range mfs[name].GetMetric() {
		ok := true
		for i := 0; i+1 < len(labels); i += 2 {
			found := false
			for _, l := range m.GetLabel() {
				if l.GetName() == labels[i] && l.GetValue() == labels[i+1] {
					found = true
				}
			}
			ok = ok && found
		}
		if ok {
			out = append(out, m)
		}
	}
	return out
}

// A configuration Prometheus would refuse at registration is refused by
// New, with an error naming the field.
func TestNewRefusesInvalidConfig(t *testing.T) {
	for _, c := range []*batonprom.Config{
		{Namespace: "baton-prod"},
		{Namespace: "1baton"},
		{ConstLabels: prometheus.Labels{"service-name": "x"}},
		{ConstLabels: prometheus.Labels{"__reserved": "x"}},
		{ConstLabels: prometheus.Labels{batonprom.LabelJob: "x"}},
	} {
		if _, err := batonprom.New(c); !errors.Is(err, batontype.ErrInvalid) {
			t.Errorf("New(%+v) = %v, want an error matching batontype.ErrInvalid", c, err)
		}
	}
	if _, err := batonprom.New(&batonprom.Config{Namespace: "svc:baton_1", ConstLabels: prometheus.Labels{"service": "x"}}); err != nil {
		t.Errorf("valid config refused: %v", err)
	}
}
