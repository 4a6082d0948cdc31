package otel_test

import (
	"context"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/baton-go/baton"
	batonotel "github.com/baton-go/baton/contrib/otel"
	"github.com/baton-go/baton/internal/telemetrytest"
	"github.com/baton-go/baton/lockprovider/memory"
	"github.com/baton-go/baton/observe"
	"github.com/baton-go/baton/ratelimit"
	"github.com/baton-go/baton/scheduler"
)

// The shared scenario on Redis and PostgreSQL, recorded by one Observer
// on the SDK's in-memory reader and span recorder: the metrics count every
// run, skip, claim, loss, lock and decision, and each instance's tick is
// a span tree, claim → run → release, with the job's own span under the
// run.
func TestScenario(t *testing.T) {
	for _, backend := range telemetrytest.Backends {
		t.Run(backend, func(t *testing.T) {
			reader := sdkmetric.NewManualReader()
			mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
			spans := tracetest.NewSpanRecorder()
			tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
			t.Cleanup(func() { _ = mp.Shutdown(context.Background()); _ = tp.Shutdown(context.Background()) })
			obs, err := batonotel.New(&batonotel.Config{MeterProvider: mp, TracerProvider: tp})
			if err != nil {
				t.Fatal(err)
			}
			work := tp.Tracer("job")
			res := telemetrytest.Run(t, backend, func(int) observe.Observer { return obs }, func(ctx context.Context, job string) {
				_, s := work.Start(ctx, "job.work")
				s.End()
			})
			var rm metricdata.ResourceMetrics
			if err := reader.Collect(context.Background(), &rm); err != nil {
				t.Fatal(err)
			}
			m := metrics(rm)
			checkMetrics(t, m, res)
			checkSpans(t, spans.Ended(), res)
		})
	}
}

func checkMetrics(t *testing.T, m map[string]metricdata.Aggregation, res telemetrytest.Result) {
	t.Helper()
	for job, outcome := range telemetrytest.Jobs {
		if got := sum(t, m, "baton.job.runs", batonotel.AttrJob.String(job), batonotel.AttrOutcome.String(outcome)); got != 1 {
			t.Errorf("baton.job.runs{%s,%s} = %v, want 1", job, outcome, got)
		}
		if got := sum(t, m, "baton.job.runs", batonotel.AttrJob.String(job)); got != 1 {
			t.Errorf("baton.job.runs{%s} = %v, want 1 run in all", job, got)
		}
		if got := sum(t, m, "baton.job.skips", batonotel.AttrJob.String(job)); got != telemetrytest.Instances-1 {
			t.Errorf("baton.job.skips{%s} = %v, want %d", job, got, telemetrytest.Instances-1)
		}
		if got := count(t, m, "baton.job.claim.duration", batonotel.AttrJob.String(job)); got != telemetrytest.Instances {
			t.Errorf("baton.job.claim.duration{%s} count = %d, want %d", job, got, telemetrytest.Instances)
		}
		if got := count(t, m, "baton.job.claim.duration", batonotel.AttrJob.String(job), batonotel.AttrOutcome.String(observe.OutcomeClaimed)); got != 1 {
			t.Errorf("baton.job.claim.duration{%s,claimed} count = %d, want 1", job, got)
		}
		if got := sum(t, m, "baton.job.active", batonotel.AttrJob.String(job)); got != 0 {
			t.Errorf("baton.job.active{%s} = %v after the runs", job, got)
		}
	}
	if got := sum(t, m, "baton.job.lock.losses", batonotel.AttrJob.String(telemetrytest.JobLost)); got != 1 {
		t.Errorf("baton.job.lock.losses = %v, want 1", got)
	}
	if got := sum(t, m, "baton.lock.losses", batonotel.AttrLock.String(telemetrytest.JobLost)); got != 1 {
		t.Errorf("baton.lock.losses = %v, want 1", got)
	}
	hist := point[metricdata.HistogramDataPoint[float64]](t, m, "baton.job.run.duration", batonotel.AttrJob.String(telemetrytest.JobLost))
	if lost := telemetrytest.LostAtMostFor.Seconds(); hist.Sum < lost*0.8 || hist.Sum > lost*2 {
		t.Errorf("run of the lock-losing job took %vs, want about its lease, %vs", hist.Sum, lost)
	}
	gauge := point[metricdata.DataPoint[float64]](t, m, "baton.job.last_success", batonotel.AttrJob.String(telemetrytest.JobOK))
	if at := time.Unix(0, int64(gauge.Value*1e9)); at.Before(res.Tick) || at.After(time.Now()) {
		t.Errorf("baton.job.last_success = %v, want between the tick %v and now", at, res.Tick)
	}
	for _, job := range []string{telemetrytest.JobFail, telemetrytest.JobPanic, telemetrytest.JobLost} {
		if has(m, "baton.job.last_success", batonotel.AttrJob.String(job)) {
			t.Errorf("baton.job.last_success set for %s, which did not succeed", job)
		}
	}
	lock := batonotel.AttrLock.String(telemetrytest.Lock)
	for _, c := range []struct {
		name    string
		outcome string
		want    float64
	}{
		{"baton.lock.attempts", observe.OutcomeGranted, 1},
		{"baton.lock.attempts", observe.OutcomeRefused, 1},
		{"baton.lock.releases", observe.OutcomeOK, 1},
	} {
		if got := sum(t, m, c.name, lock, batonotel.AttrOutcome.String(c.outcome)); got != c.want {
			t.Errorf("%s{%s} = %v, want %v", c.name, c.outcome, got, c.want)
		}
	}
	for _, outcome := range []string{observe.OutcomeGranted, observe.OutcomeRefused} {
		if got := count(t, m, "baton.lock.wait.duration", lock, batonotel.AttrOutcome.String(outcome)); got != 1 {
			t.Errorf("baton.lock.wait.duration{%s} count = %d, want 1", outcome, got)
		}
	}
	policy := batonotel.AttrPolicy.String(telemetrytest.Policy)
	if got := count(t, m, "baton.ratelimit.decision.duration", policy, batonotel.AttrOutcome.String(observe.OutcomeAllowed)); got != 2 {
		t.Errorf("allowed decisions = %v, want 2", got)
	}
	if got := count(t, m, "baton.ratelimit.decision.duration", policy, batonotel.AttrOutcome.String(observe.OutcomeDenied)); got != 1 {
		t.Errorf("denied decisions = %v, want 1", got)
	}
	if ra := point[metricdata.HistogramDataPoint[float64]](t, m, "baton.ratelimit.retry_after", policy); ra.Count != 1 || ra.Sum <= 0 || ra.Sum > 30 {
		t.Errorf("retry_after: count %d sum %v, want one of up to 30s", ra.Count, ra.Sum)
	}
}

func checkSpans(t *testing.T, spans []sdktrace.ReadOnlySpan, res telemetrytest.Result) {
	t.Helper()
	children := map[string][]sdktrace.ReadOnlySpan{} // parent span id -> children
	for _, s := range spans {
		if s.Parent().IsValid() {
			children[s.Parent().SpanID().String()] = append(children[s.Parent().SpanID().String()], s)
		}
	}
	child := func(parent sdktrace.ReadOnlySpan, name string) sdktrace.ReadOnlySpan {
		for _, c := range children[parent.SpanContext().SpanID().String()] {
			if c.Name() == name {
				return c
			}
		}
		return nil
	}
	tick := res.Tick.UTC().Format(time.RFC3339Nano)
	for job, outcome := range telemetrytest.Jobs {
		var ticks, won int
		for _, s := range spans {
			if s.Name() != "baton.job.tick" || attr(s, batonotel.AttrJob) != job {
				continue
			}
			ticks++
			if s.Parent().IsValid() || attr(s, batonotel.AttrTick) != tick {
				t.Errorf("%s: tick span with parent %v and tick %q, want a root for %s", job, s.Parent().SpanID(), attr(s, batonotel.AttrTick), tick)
			}
			claim := child(s, "baton.job.claim")
			if claim == nil {
				t.Errorf("%s: tick span without a claim", job)
				continue
			}
			run := child(s, "baton.job.run")
			if run == nil {
				if attr(s, batonotel.AttrOutcome) != observe.OutcomeSkipped || attr(claim, batonotel.AttrSkipReason) == "" {
					t.Errorf("%s: tick without a run has outcome %q, claim reason %q", job, attr(s, batonotel.AttrOutcome), attr(claim, batonotel.AttrSkipReason))
				}
				continue
			}
			won++
			release := child(s, "baton.lock.release")
			token := attribute.Int64Value(res.Token[job]).String()
			for _, c := range []sdktrace.ReadOnlySpan{claim, run, release} {
				if c == nil {
					t.Errorf("%s: the winner's tick lacks a claim, run or release span", job)
					continue
				}
				if attr(c, batonotel.AttrToken) != token || attr(c, batonotel.AttrJob) != job && c != release {
					t.Errorf("%s: %s has token %q job %q, want %s", job, c.Name(), attr(c, batonotel.AttrToken), attr(c, batonotel.AttrJob), token)
				}
			}
			if release != nil && (release.StartTime().Before(run.EndTime()) || run.StartTime().Before(claim.EndTime())) {
				t.Errorf("%s: claim, run and release overlap", job)
			}
			if attr(run, batonotel.AttrOutcome) != outcome || attr(s, batonotel.AttrOutcome) != outcome {
				t.Errorf("%s: run outcome %q, tick outcome %q, want %q", job, attr(run, batonotel.AttrOutcome), attr(s, batonotel.AttrOutcome), outcome)
			}
			if child(run, "job.work") == nil {
				t.Errorf("%s: the job's own span is not a child of the run span", job)
			}
		}
		if ticks != telemetrytest.Instances || won != 1 {
			t.Errorf("%s: %d tick spans, %d with a run; want %d and 1", job, ticks, won, telemetrytest.Instances)
		}
	}
	for _, s := range spans {
		if s.Name() == "baton.lock.acquire" || s.Name() == "baton.ratelimit.decision" {
			t.Errorf("a %s span without a parent span: only with RootSpans", s.Name())
		}
	}
}

// Lock and rate-limit spans are made under a recording parent span, and
// without one only with RootSpans; they carry the lock's or policy's
// attributes, never the key.
func TestSpansNeedParent(t *testing.T) {
	for _, root := range []bool{false, true} {
		spans := tracetest.NewSpanRecorder()
		tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
		obs, err := batonotel.New(&batonotel.Config{MeterProvider: sdkmetric.NewMeterProvider(), TracerProvider: tp, RootSpans: root})
		if err != nil {
			t.Fatal(err)
		}
		p := newMemory(t, nil)
		locker, err := baton.NewLocker(p, &baton.Config{Observer: obs})
		if err != nil {
			t.Fatal(err)
		}
		lim, err := ratelimit.New(p, []ratelimit.Limit{ratelimit.PerMinute(1)}, &ratelimit.Config{Observer: obs})
		if err != nil {
			t.Fatal(err)
		}
		parent, request := tp.Tracer("app").Start(context.Background(), "request")
		for _, ctx := range []context.Context{parent, context.Background()} {
			lock, err := locker.TryAcquire(ctx, "report", nil)
			if err != nil {
				t.Fatal(err)
			}
			if err := lock.Release(ctx); err != nil {
				t.Fatal(err)
			}
			if _, err := lim.Allow(ctx, "203.0.113.7"); err != nil {
				t.Fatal(err)
			}
		}
		request.End()
		under, roots := map[string]int{}, map[string]int{}
		for _, s := range spans.Ended() {
			switch {
			case s.Name() == "request":
			case s.Parent().SpanID() == request.SpanContext().SpanID():
				under[s.Name()]++
			case !s.Parent().IsValid():
				roots[s.Name()]++
			}
			for _, kv := range s.Attributes() {
				if kv.Value.String() == "203.0.113.7" {
					t.Errorf("%s carries the rate-limit key in %s", s.Name(), kv.Key)
				}
			}
		}
		for _, name := range []string{"baton.lock.acquire", "baton.lock.release", "baton.ratelimit.decision"} {
			wantRoots := 0
			if root {
				wantRoots = 1
			}
			if under[name] != 1 || roots[name] != wantRoots {
				t.Errorf("RootSpans %v: %s: %d under the request, %d roots; want 1 and %d", root, name, under[name], roots[name], wantRoots)
			}
		}
		_ = tp.Shutdown(context.Background())
	}
}

func attr(s sdktrace.ReadOnlySpan, k attribute.Key) string {
	for _, kv := range s.Attributes() {
		if kv.Key == k {
			return kv.Value.String()
		}
	}
	return ""
}

func metrics(rm metricdata.ResourceMetrics) map[string]metricdata.Aggregation {
	out := map[string]metricdata.Aggregation{}
	for _, sm := range rm.ScopeMetrics {
		if sm.Scope.Name != batonotel.ScopeName {
			continue
		}
		for _, m := range sm.Metrics {
			out[m.Name] = m.Data
		}
	}
	return out
}

// matches reports whether set holds every one of want.
func matches(set attribute.Set, want []attribute.KeyValue) bool {
	for _, kv := range want {
		if v, ok := set.Value(kv.Key); !ok || v != kv.Value {
			return false
		}
	}
	return true
}

// sum adds the values of the points of counter name with attributes want.
func sum(t *testing.T, m map[string]metricdata.Aggregation, name string, want ...attribute.KeyValue) float64 {
	t.Helper()
	var total float64
	switch d := m[name].(type) {
	case metricdata.Sum[int64]:
		for _, p := range d.DataPoints {
			if matches(p.Attributes, want) {
				total += float64(p.Value)
			}
		}
	default:
		t.Fatalf("metric %s: %T, want an int64 sum", name, m[name])
	}
	return total
}

// count adds the counts of the points of histogram name with attributes want.
func count(t *testing.T, m map[string]metricdata.Aggregation, name string, want ...attribute.KeyValue) uint64 {
	t.Helper()
	d, ok := m[name].(metricdata.Histogram[float64])
	if !ok {
		t.Fatalf("metric %s: %T, want a histogram", name, m[name])
	}
	var n uint64
	for _, p := range d.DataPoints {
		if matches(p.Attributes, want) {
			n += p.Count
		}
	}
	return n
}

func has(m map[string]metricdata.Aggregation, name string, want ...attribute.KeyValue) bool {
	if d, ok := m[name].(metricdata.Gauge[float64]); ok {
		for _, p := range d.DataPoints {
			if matches(p.Attributes, want) {
				return true
			}
		}
	}
	return false
}

// point returns the one point of name with attributes want.
func point[P metricdata.HistogramDataPoint[float64] | metricdata.DataPoint[float64]](t *testing.T, m map[string]metricdata.Aggregation, name string, want ...attribute.KeyValue) P {
	t.Helper()
	var pts []P
	switch d := m[name].(type) {
	case metricdata.Histogram[float64]:
		for _, p := range d.DataPoints {
			if matches(p.Attributes, want) {
				pts = append(pts, any(p).(P))
			}
		}
	case metricdata.Gauge[float64]:
		for _, p := range d.DataPoints {
			if matches(p.Attributes, want) {
				pts = append(pts, any(p).(P))
			}
		}
	}
	if len(pts) != 1 {
		t.Fatalf("metric %s %v: %d points, want 1", name, want, len(pts))
	}
	return pts[0]
}

// Two Observers joined (two tracing back-ends, say) each end the spans
// they began, though the second's span is the one in front in the
// context.
func TestJoinedObservers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var recs []*tracetest.SpanRecorder
		var obs []observe.Observer
		for range 2 {
			rec := tracetest.NewSpanRecorder()
			o, err := batonotel.New(&batonotel.Config{MeterProvider: sdkmetric.NewMeterProvider(),
				TracerProvider: sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))})
			if err != nil {
				t.Fatal(err)
			}
			recs, obs = append(recs, rec), append(obs, o)
		}
		s, err := scheduler.New(newMemory(t, nil), &scheduler.Config{Observer: observe.Join(obs...)})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Every(time.Minute).Locked("joined", scheduler.AtMostFor(10*time.Second)).Do(
			func(context.Context, scheduler.Run) error { return nil }); err != nil {
			t.Fatal(err)
		}
		if err := s.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Minute + time.Second)
		synctest.Wait()
		_ = s.Close()
		for i, rec := range recs {
			var names []string
			for _, sp := range rec.Ended() {
				names = append(names, sp.Name())
			}
			if got := strings.Join(names, " "); got != "baton.job.claim baton.job.run baton.lock.release baton.job.tick" {
				t.Errorf("observer %d ended %q", i, got)
			}
		}
	})
}

// newMemory returns a memory provider, failing the test if New does.
func newMemory(t testing.TB, cfg *memory.Config) *memory.Provider {
	t.Helper()
	p, err := memory.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return p
}
