package statustest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/baton-go/baton/batontype"
	"github.com/baton-go/baton/internal/testenv"
	"github.com/baton-go/baton/internal/testenv/pgenv"
	"github.com/baton-go/baton/internal/testenv/redisenv"
	"github.com/baton-go/baton/lockprovider"
	pgprovider "github.com/baton-go/baton/lockprovider/postgres"
	redisprovider "github.com/baton-go/baton/lockprovider/redis"
	"github.com/baton-go/baton/scheduler"
	"github.com/baton-go/baton/status"
)

// mixed is a deployment of the kind the page must show together: three
// scheduler instances whose jobs, ledger and registry are in Redis, and a
// lock and rate-limit state in PostgreSQL.
type mixed struct {
	redis    *redisprovider.Provider
	postgres *pgprovider.Provider
	backends []status.Backend
	limit    batontype.RateLimit
	started  time.Time // when the last scheduler instance started
}

const replicas = 3

// startMixed starts three scheduler instances on Redis with the ledger on:
// "ok" succeeds, "fail" returns an error and "boom" panics, every iv.
// It waits until each job has at least two finished runs.
func startMixed(t *testing.T, iv time.Duration) *mixed {
	t.Helper()
	ctx := t.Context()
	m := &mixed{limit: batontype.RateLimit{Algorithm: batontype.TokenBucket, Rate: 5, Period: time.Minute}}
	var err error
	if m.redis, err = redisprovider.New(redisenv.Client(t), &redisprovider.Config{Prefix: testenv.Prefix(t)}); err != nil {
		t.Fatal(err)
	}
	if m.postgres, err = pgprovider.New(pgenv.Schema(t).Pool, nil); err != nil {
		t.Fatal(err)
	}
	if err := m.postgres.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	m.backends = []status.Backend{{Name: "redis", Provider: m.redis}, {Name: "postgres", Provider: m.postgres}}
	for i := range replicas {
		s, err := scheduler.New(m.redis, &scheduler.Config{LockedBy: "replica-" + strconv.Itoa(i+1), Ledger: true, RegistryTTL: 5 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		jobs := map[string]scheduler.Func{
			"ok":   func(ctx context.Context, run scheduler.Run) error { time.Sleep(20 * time.Millisecond); return nil },
			"fail": func(ctx context.Context, run scheduler.Run) error { return errors.New("upstream said 503") },
			"boom": func(ctx context.Context, run scheduler.Run) error { panic("nil map write") },
		}
		for name, fn := range jobs {
			if _, err := s.Every(iv).Locked(name, scheduler.AtMostFor(10*time.Second)).Do(fn); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			if err := s.Shutdown(ctx); err != nil {
				t.Errorf("shutdown: %v", err)
			}
		})
	}
	m.started = time.Now()
	deadline := time.Now().Add(20 * time.Second)
	for _, job := range []string{"ok", "fail", "boom"} {
		for {
			runs, err := m.redis.Runs(ctx, batontype.RunQuery{Job: job})
			if err != nil {
				t.Fatal(err)
			}
			done := 0
			for _, r := range runs {
				if r.Outcome != batontype.OutcomeRunning {
					done++
				}
			}
			if done >= 2 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("job %s: %d finished runs after 20s", job, done)
			}
			time.Sleep(iv / 4) // poll interval of a deadline-bounded wait
		}
	}
	return m
}

// page serves a handler for m's backends mounted under /ops/baton/.
func (m *mixed) page(t *testing.T, actions bool) *httptest.Server {
	t.Helper()
	h, err := status.New(&status.Config{
		Backends: m.backends,
		Actions:  actions,
		Grace:    time.Second,
		Refresh:  time.Nanosecond, // every request reads the backends
		Limits: func(key string) []batontype.RateLimit {
			if strings.HasPrefix(key, "api:") {
				return []batontype.RateLimit{m.limit}
			}
			return nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/ops/baton/", h)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

func getJSON(t *testing.T, url string, v any) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s %s", url, resp.Status, body)
	}
	if err := json.Unmarshal(body, v); err != nil {
		t.Fatalf("GET %s: %v in %s", url, err, body)
	}
}

type postResult struct {
	code int
	body map[string]any
}

func post(t *testing.T, url, contentType string, header http.Header, body any) postResult {
	t.Helper()
	b, _ := json.Marshal(body)
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", contentType)
	for k, v := range header {
		req.Header[k] = v
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out := postResult{code: resp.StatusCode}
	_ = json.NewDecoder(resp.Body).Decode(&out.body)
	return out
}

type jobsResp struct {
	Jobs []struct {
		Backend  string               `json:"backend"`
		Name     string               `json:"name"`
		Replicas []string             `json:"replicas"`
		LastRun  *batontype.RunRecord `json:"last_run"`
		Problem  string               `json:"problem"`
		NextTick time.Time            `json:"next_tick"`
	} `json:"jobs"`
	Instances []struct {
		LockedBy string `json:"locked_by"`
	} `json:"instances"`
	Errors []any `json:"errors"`
}

type timelineResp struct {
	From, To, Now int64
	Total         int
	Jobs          []struct {
		Backend string
		Job     string
		Mode    string
		Lanes   []string
		Runs    []struct {
			Lane    int
			Tick    int64
			Start   int64
			End     int64
			Outcome string
			Token   int64
			Error   string
		}
		Counts map[string]int
	}
	Errors []any
}

// The Jobs, Timeline, Locks and Rate limits endpoints show a mixed
// deployment as its backends hold it.
func TestViews(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	m := startMixed(t, 300*time.Millisecond)
	srv := m.page(t, false)
	base := srv.URL + "/ops/baton/"
	// The latest tick due a Grace (1s) ago must be one the instances
	// were running for.
	time.Sleep(time.Until(m.started.Add(1600 * time.Millisecond)))

	// A job whose newest run is still open is running, not failed
	// (jobstate.State): read the view between runs of the failing jobs,
	// which return at once (a tick every 300 ms).
	var jobs jobsResp
	for deadline := time.Now().Add(10 * time.Second); ; {
		jobs = jobsResp{}
		getJSON(t, base+"api/jobs", &jobs)
		open := false
		for _, j := range jobs.Jobs {
			open = open || j.Name != "ok" && j.LastRun != nil && j.LastRun.Outcome == batontype.OutcomeRunning
		}
		if !open || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond) // poll interval of a deadline-bounded wait
	}
	if len(jobs.Errors) > 0 || len(jobs.Instances) != replicas {
		t.Fatalf("jobs: errors %v, %d instances, want none and %d", jobs.Errors, len(jobs.Instances), replicas)
	}
	want := map[string]batontype.Outcome{"boom": batontype.OutcomePanicked, "fail": batontype.OutcomeFailed, "ok": batontype.OutcomeSucceeded}
	for _, j := range jobs.Jobs {
		o, ok := want[j.Name]
		if !ok || j.Backend != "redis" || len(j.Replicas) != replicas || j.NextTick.IsZero() || j.LastRun == nil {
			t.Errorf("job %+v", j)
			continue
		}
		delete(want, j.Name)
		// The newest run may still be open; a finished one has the job's outcome.
		if j.LastRun.Outcome != batontype.OutcomeRunning && j.LastRun.Outcome != o {
			t.Errorf("job %s: last run %s, want %s", j.Name, j.LastRun.Outcome, o)
		}
		if j.Name != "ok" && j.Problem != "failed" {
			t.Errorf("job %s: problem %q, want failed", j.Name, j.Problem)
		}
	}
	if len(want) > 0 {
		t.Errorf("jobs missing: %v", want)
	}

	// Every recorded run is in the lane of the replica that ran it, with
	// its outcome and token.
	now := time.Now()
	var tl timelineResp
	getJSON(t, fmt.Sprintf("%sapi/timeline?from=%d&to=%d&buckets=500", base, now.Add(-time.Minute).UnixMilli(), now.Add(time.Second).UnixMilli()), &tl)
	if tl.Total != 3 || len(tl.Jobs) != 3 {
		t.Fatalf("timeline: %d of %d jobs, want 3", len(tl.Jobs), tl.Total)
	}
	for _, j := range tl.Jobs {
		if j.Mode != "runs" || len(j.Lanes) != replicas {
			t.Fatalf("timeline job %s: mode %s lanes %v", j.Job, j.Mode, j.Lanes)
		}
		recs, err := m.redis.Runs(ctx, batontype.RunQuery{Job: j.Job, Until: time.UnixMilli(tl.Now)})
		if err != nil {
			t.Fatal(err)
		}
		byToken := map[int64]int{}
		for i, r := range j.Runs {
			byToken[r.Token] = i
		}
		for _, rec := range recs {
			i, ok := byToken[rec.Token]
			if !ok {
				t.Errorf("%s: run with token %d not on the timeline", j.Job, rec.Token)
				continue
			}
			r := j.Runs[i]
			if j.Lanes[r.Lane] != rec.LockedBy || r.Start != rec.Started.UnixMilli() || r.Tick != rec.Tick.UnixMilli() {
				t.Errorf("%s token %d: lane %s start %d tick %d, want %s %d %d", j.Job, rec.Token, j.Lanes[r.Lane], r.Start, r.Tick, rec.LockedBy, rec.Started.UnixMilli(), rec.Tick.UnixMilli())
			}
			// The handler read the runs after tl.Now: a run that ended
			// since then may have been drawn still running.
			drawnRunning := r.Outcome == batontype.OutcomeRunning.String() && rec.Finished.After(time.UnixMilli(tl.Now))
			if rec.Outcome != batontype.OutcomeRunning && r.Outcome != rec.Outcome.String() && !drawnRunning {
				t.Errorf("%s token %d: outcome %s, want %s", j.Job, rec.Token, r.Outcome, rec.Outcome)
			}
			if rec.Outcome == batontype.OutcomeFailed && r.Error != "upstream said 503" {
				t.Errorf("%s token %d: error %q", j.Job, rec.Token, r.Error)
			}
		}
	}

	// A lock held in PostgreSQL, a rate-limit key used up there too.
	lease, err := m.postgres.Acquire(ctx, lockprovider.AcquireParams{Name: "payments", Owner: lockprovider.NewOwner(), AtMostFor: time.Minute, LockedBy: "billing-7"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.postgres.RateLimit(ctx, lockprovider.RateRequest{Key: "api:alice", N: 5, Limits: []batontype.RateLimit{m.limit}}); err != nil {
		t.Fatal(err)
	}
	if _, err := m.postgres.RateLimit(ctx, lockprovider.RateRequest{Key: "api:bob", N: 1, Limits: []batontype.RateLimit{m.limit}}); err != nil {
		t.Fatal(err)
	}
	var locks struct {
		Locks []struct {
			Backend, Name string
			LockedBy      string `json:"locked_by"`
			Token         int64
			Held          bool
			Until         time.Time
		}
	}
	getJSON(t, base+"api/locks", &locks)
	found := false
	for _, l := range locks.Locks {
		if l.Name == "payments" {
			found = l.Backend == "postgres" && l.Held && l.Token == lease.Token && l.Until.Equal(lease.Until)
		}
	}
	if !found {
		t.Errorf("locks: payments (token %d) not listed as held on postgres: %+v", lease.Token, locks.Locks)
	}
	var limits struct {
		Limits []struct {
			Backend, Key, State string
			Remaining           *int64
			Capacity            int64
		}
	}
	getJSON(t, base+"api/limits", &limits)
	states := map[string]string{}
	for _, l := range limits.Limits {
		if l.Backend == "postgres" && l.Remaining != nil {
			states[l.Key] = fmt.Sprintf("%s %d/%d", l.State, *l.Remaining, l.Capacity)
		}
	}
	if states["api:alice"] != "over 0/5" || states["api:bob"] != "ok 4/5" {
		t.Errorf("limits: %v, want api:alice over 0/5, api:bob ok 4/5", states)
	}
	if len(limits.Limits) == 0 || limits.Limits[0].Key != "api:alice" {
		t.Errorf("limits: the key over its limit is not listed first: %+v", limits.Limits)
	}
}

// Actions are refused while disabled, refused from another origin or
// without a JSON body, and otherwise act on the backend.
func TestActions(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	m := startMixed(t, time.Second)
	hold := func() batontype.Lease {
		l, err := m.postgres.Acquire(ctx, lockprovider.AcquireParams{Name: "payments", Owner: lockprovider.NewOwner(), AtMostFor: time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	held := func() batontype.LeaseInfo {
		i, err := m.postgres.Inspect(ctx, "payments")
		if err != nil {
			t.Fatal(err)
		}
		return i
	}
	lease := hold()
	release := map[string]any{"backend": "postgres", "name": "payments", "token": lease.Token}

	ro := m.page(t, false).URL + "/ops/baton/api/actions/"
	for _, a := range []struct {
		path string
		body any
	}{
		{"force-release", release},
		{"reset-rate", map[string]any{"backend": "postgres", "key": "api:alice"}},
		{"job", map[string]any{"backend": "redis", "job": "ok", "action": "run"}},
	} {
		if r := post(t, ro+a.path, "application/json", nil, a.body); r.code != http.StatusForbidden || !strings.Contains(fmt.Sprint(r.body["error"]), "disabled") {
			t.Errorf("%s with actions off: %d %v, want 403 disabled", a.path, r.code, r.body)
		}
	}
	if !held().Held {
		t.Fatal("the lock was freed by a refused request")
	}

	rw := m.page(t, true).URL + "/ops/baton/api/actions/"
	for _, c := range []struct {
		name        string
		contentType string
		header      http.Header
		want        int
	}{
		{"cross-site fetch", "application/json", http.Header{"Sec-Fetch-Site": {"cross-site"}}, http.StatusForbidden},
		{"foreign origin", "application/json", http.Header{"Origin": {"https://evil.example"}}, http.StatusForbidden},
		{"form post", "application/x-www-form-urlencoded", nil, http.StatusUnsupportedMediaType},
		{"text/plain", "text/plain", nil, http.StatusUnsupportedMediaType},
	} {
		if r := post(t, rw+"force-release", c.contentType, c.header, release); r.code != c.want {
			t.Errorf("%s: %d %v, want %d", c.name, r.code, r.body, c.want)
		}
	}
	if !held().Held {
		t.Fatal("the lock was freed by a refused request")
	}
	if r := post(t, rw+"force-release", "application/json", nil, map[string]any{"backend": "postgres", "name": "payments", "token": lease.Token + 1}); r.code != http.StatusConflict {
		t.Errorf("force-release of another token: %d %v, want 409", r.code, r.body)
	}
	if r := post(t, rw+"force-release", "application/json", nil, map[string]any{"backend": "nowhere", "name": "payments"}); r.code != http.StatusNotFound {
		t.Errorf("force-release on an unknown backend: %d %v, want 404", r.code, r.body)
	}
	if r := post(t, rw+"job", "application/json", nil, map[string]any{"backend": "redis", "job": "ok", "action": "run"}); r.code != http.StatusNotImplemented {
		t.Errorf("run-now without a Control: %d %v, want 501", r.code, r.body)
	}
	same := http.Header{"Sec-Fetch-Site": {"same-origin"}}
	if r := post(t, rw+"force-release", "application/json", same, release); r.code != http.StatusOK || r.body["token"] != float64(lease.Token) {
		t.Fatalf("force-release: %d %v", r.code, r.body)
	}
	if i := held(); i.Held {
		t.Fatalf("after force-release the backend still holds the lock: %+v", i)
	}

	if _, err := m.postgres.RateLimit(ctx, lockprovider.RateRequest{Key: "api:alice", N: 5, Limits: []batontype.RateLimit{m.limit}}); err != nil {
		t.Fatal(err)
	}
	if r := post(t, rw+"reset-rate", "application/json", same, map[string]any{"backend": "postgres", "key": "api:alice"}); r.code != http.StatusOK {
		t.Fatalf("reset-rate: %d %v", r.code, r.body)
	}
	res, err := m.postgres.RateLimit(ctx, lockprovider.RateRequest{Key: "api:alice", N: 0, Limits: []batontype.RateLimit{m.limit}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Limits[0].Remaining != 5 {
		t.Errorf("after reset api:alice has %d left, want 5", res.Limits[0].Remaining)
	}
}

// control records the calls of the Jobs view's buttons.
type control struct {
	mu    sync.Mutex
	calls []string
}

func (c *control) RunNow(ctx context.Context, job string) error { return c.add("run " + job) }
func (c *control) Pause(ctx context.Context, job string) error  { return c.add("pause " + job) }
func (c *control) Resume(ctx context.Context, job string) error { return c.add("resume " + job) }
func (c *control) add(s string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.calls = append(c.calls, s)
	return nil
}

// registerReport registers an instance with the job "report": the page
// acts only on jobs a live instance has (others are 404).
func registerReport(t *testing.T, p lockprovider.Registry) {
	t.Helper()
	inst := batontype.Instance{LockedBy: "app-1", Started: time.Now(), Jobs: []batontype.JobSpec{{Name: "report", Schedule: "@every 1h0m0s", Locked: true, AtMostFor: time.Minute}}}
	if err := p.Register(t.Context(), inst, time.Minute); err != nil {
		t.Fatal(err)
	}
}

// A Backend's Control receives run-now, pause and resume; a job no live
// instance has is 404, as the CLI exits 3.
func TestControl(t *testing.T) {
	t.Parallel()
	p, err := redisprovider.New(redisenv.Client(t), &redisprovider.Config{Prefix: testenv.Prefix(t)})
	if err != nil {
		t.Fatal(err)
	}
	registerReport(t, p)
	c := &control{}
	h, err := status.New(&status.Config{Backends: []status.Backend{{Name: "redis", Provider: p, Control: c}}, Actions: true})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	for _, a := range []string{"run", "pause", "resume"} {
		if r := post(t, srv.URL+"/api/actions/job", "application/json", nil, map[string]any{"backend": "redis", "job": "report", "action": a}); r.code != http.StatusOK {
			t.Errorf("%s: %d %v", a, r.code, r.body)
		}
	}
	if r := post(t, srv.URL+"/api/actions/job", "application/json", nil, map[string]any{"backend": "redis", "job": "report", "action": "delete"}); r.code != http.StatusBadRequest {
		t.Errorf("unknown action: %d %v, want 400", r.code, r.body)
	}
	if r := post(t, srv.URL+"/api/actions/job", "application/json", nil, map[string]any{"backend": "redis", "job": "nope", "action": "run"}); r.code != http.StatusNotFound {
		t.Errorf("run of an unknown job: %d %v, want 404", r.code, r.body)
	}
	if got := strings.Join(c.calls, ", "); got != "run report, pause report, resume report" {
		t.Errorf("calls: %s", got)
	}
}

// The page and its endpoints answer under any prefix: on a mux pattern,
// behind http.StripPrefix, and at the root.
func TestMount(t *testing.T) {
	t.Parallel()
	p, err := redisprovider.New(redisenv.Client(t), &redisprovider.Config{Prefix: testenv.Prefix(t)})
	if err != nil {
		t.Fatal(err)
	}
	h, err := status.New(&status.Config{Backends: []status.Backend{{Name: "redis", Provider: p}}})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/a/status/", h)
	mux.Handle("/b/", http.StripPrefix("/b", h))
	mux.Handle("/c", http.StripPrefix("/c", h))
	mux.Handle("/c/", http.StripPrefix("/c", h))
	srv := httptest.NewServer(mux)
	defer srv.Close()
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	for _, c := range []struct {
		path, want string
		code       int
	}{
		{"/a/status/", "<title>baton status</title>", 200},
		{"/a/status/assets/app.js", "use strict", 200},
		{"/a/status/assets/style.css", "--ok", 200},
		{"/a/status/api/info", `"actions":false`, 200},
		{"/b/", "<title>baton status</title>", 200},
		{"/b/api/locks", `"locks":[]`, 200},
		{"/c/api/jobs", `"jobs":[]`, 200},
		{"/c", "", http.StatusMovedPermanently},
		{"/a/status/assets/", "", 404},
		{"/a/status/assets/nope.js", "", 404},
		{"/a/status/nope", "", 404},
	} {
		resp, err := noRedirect.Get(srv.URL + c.path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != c.code || !strings.Contains(string(body), c.want) {
			t.Errorf("GET %s: %d %.80q, want %d with %q", c.path, resp.StatusCode, body, c.code, c.want)
		}
		if c.code == http.StatusMovedPermanently && resp.Header.Get("Location") != "/c/" {
			t.Errorf("GET %s: Location %q, want /c/", c.path, resp.Header.Get("Location"))
		}
		if c.code == 200 && resp.Header.Get("Content-Security-Policy") == "" {
			t.Errorf("GET %s: no Content-Security-Policy", c.path)
		}
	}
	if r := post(t, srv.URL+"/a/status/api/jobs", "application/json", nil, nil); r.code != http.StatusMethodNotAllowed {
		t.Errorf("POST api/jobs: %d, want 405", r.code)
	}
	resp, err := http.Get(srv.URL + "/a/status/api/timeline?from=5&to=4")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest {
		t.Errorf("timeline with to before from: %d, want 400", resp.StatusCode)
	}
}

// Bad configuration is a validation error.
func TestConfig(t *testing.T) {
	t.Parallel()
	p, err := redisprovider.New(redisenv.Client(t), &redisprovider.Config{Prefix: testenv.Prefix(t)})
	if err != nil {
		t.Fatal(err)
	}
	for name, cfg := range map[string]status.Config{
		"no backend":     {},
		"empty name":     {Backends: []status.Backend{{Provider: p}}},
		"twice":          {Backends: []status.Backend{{Name: "a", Provider: p}, {Name: "a", Provider: p}}},
		"nil provider":   {Backends: []status.Backend{{Name: "a"}}},
		"negative grace": {Backends: []status.Backend{{Name: "a", Provider: p}}, Grace: -time.Second},
		"bad origin":     {Backends: []status.Backend{{Name: "a", Provider: p}}, TrustedOrigins: []string{"not a url"}},
	} {
		if _, err := status.New(&cfg); !errors.Is(err, batontype.ErrInvalid) {
			t.Errorf("%s: %v, want ErrInvalid", name, err)
		}
	}
	if _, err := status.New(nil); !errors.Is(err, batontype.ErrInvalid) {
		t.Errorf("nil Config: %v, want ErrInvalid (no backend)", err)
	}
}

// A backend that cannot be reached is reported per view; the others are
// still shown.
func TestBackendDown(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	down := goredis.NewClient(&goredis.Options{Addr: "127.0.0.1:1", ContextTimeoutEnabled: true, MaxRetries: -1})
	defer down.Close()
	rp, err := redisprovider.New(down, nil)
	if err != nil {
		t.Fatal(err)
	}
	pp, err := pgprovider.New(pgenv.Schema(t).Pool, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := pp.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := pp.Acquire(ctx, lockprovider.AcquireParams{Name: "payments", Owner: lockprovider.NewOwner(), AtMostFor: time.Minute}); err != nil {
		t.Fatal(err)
	}
	h, err := status.New(&status.Config{Backends: []status.Backend{{Name: "redis", Provider: rp}, {Name: "postgres", Provider: pp}}, Timeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	var locks struct {
		Locks  []struct{ Backend, Name string }
		Errors []struct{ Backend, Error string }
	}
	getJSON(t, srv.URL+"/api/locks", &locks)
	if len(locks.Locks) != 1 || locks.Locks[0].Name != "payments" || len(locks.Errors) == 0 || locks.Errors[0].Backend != "redis" {
		t.Errorf("locks with redis down: %+v", locks)
	}
	for _, view := range []string{"jobs", "timeline", "limits"} {
		var v struct {
			Errors []struct{ Backend, Error string }
		}
		getJSON(t, srv.URL+"/api/"+view, &v)
		if len(v.Errors) == 0 || v.Errors[0].Backend != "redis" {
			t.Errorf("%s with redis down: errors %+v", view, v.Errors)
		}
	}
}

// ProviderControl drives the provider's own control state: the page's
// buttons do what `baton jobs run|pause|resume` do.
func TestProviderControl(t *testing.T) {
	t.Parallel()
	p, err := redisprovider.New(redisenv.Client(t), &redisprovider.Config{Prefix: testenv.Prefix(t)})
	if err != nil {
		t.Fatal(err)
	}
	registerReport(t, p)
	h, err := status.New(&status.Config{Backends: []status.Backend{{Name: "redis", Provider: p, Control: status.ProviderControl(p, "test")}}, Actions: true})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	act := func(a string) {
		t.Helper()
		if r := post(t, srv.URL+"/api/actions/job", "application/json", nil, map[string]any{"backend": "redis", "job": "report", "action": a}); r.code != http.StatusOK {
			t.Fatalf("%s: %d %v", a, r.code, r.body)
		}
	}
	ctx := context.Background()
	act("pause")
	st, err := p.ControlState(ctx)
	if err != nil || !st.IsPaused("report") {
		t.Fatalf("after pause: %+v, %v; want report paused", st, err)
	}
	act("resume")
	act("run")
	st, err = p.ControlState(ctx)
	if err != nil || st.IsPaused("report") || len(st.Requests) != 1 || st.Requests[0].Job != "report" || !strings.HasPrefix(st.Requests[0].RequestedBy, "page:127.0.0.1:") {
		t.Fatalf("after resume and run: %+v, %v; want report not paused and one request by the page's sender (page:ADDRESS), as its force-releases are", st, err)
	}
}
