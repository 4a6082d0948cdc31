package statustest

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/baton-go/baton/batontype"
	"github.com/baton-go/baton/internal/testenv"
	"github.com/baton-go/baton/internal/testenv/pgenv"
	"github.com/baton-go/baton/internal/testenv/redisenv"
	"github.com/baton-go/baton/lockprovider"
	"github.com/baton-go/baton/lockprovider/memory"
	pgprovider "github.com/baton-go/baton/lockprovider/postgres"
	redisprovider "github.com/baton-go/baton/lockprovider/redis"
	"github.com/baton-go/baton/status"
)

// do sends a request to srv with the given Host and headers and returns
// its status code.
func do(t *testing.T, srv *httptest.Server, method, path, host string, header http.Header, body string) int {
	t.Helper()
	req, err := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Host = host
	for k, v := range header {
		req.Header[k] = v
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

func guarded(t *testing.T, cfg status.Config) (*httptest.Server, *memory.Provider) {
	t.Helper()
	p, err := memory.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Backends = []status.Backend{{Name: "memory", Provider: p}}
	h, err := status.New(&cfg)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv, p
}

// A request shaped like DNS rebinding (a hostile name resolved to this
// server: Host and Origin are the hostile name's, and the browser calls
// it same-origin) is refused, reads and actions alike, though actions are
// on; loopback names, IP addresses and the allowed names are served.
func TestForeignHostRefused(t *testing.T) {
	t.Parallel()
	srv, p := guarded(t, status.Config{Actions: true, AllowedHosts: []string{"ops.example.com"}})
	l, err := p.Acquire(t.Context(), lockprovider.AcquireParams{Name: "payments", Owner: lockprovider.NewOwner(), AtMostFor: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	evil := "evil.example:8090"
	rebinding := http.Header{"Origin": {"http://" + evil}, "Sec-Fetch-Site": {"same-origin"}}
	for _, path := range []string{"/", "/api/info", "/api/jobs", "/api/locks", "/assets/app.js", "/readyz"} {
		if code := do(t, srv, http.MethodGet, path, evil, rebinding, ""); code != http.StatusForbidden {
			t.Errorf("GET %s with Host %s: %d, want 403", path, evil, code)
		}
	}
	action := http.Header{"Content-Type": {"application/json"}}
	for k, v := range rebinding {
		action[k] = v
	}
	body := `{"backend":"memory","name":"payments","token":` + jsonInt(l.Token) + `}`
	if code := do(t, srv, http.MethodPost, "/api/actions/force-release", evil, action, body); code != http.StatusForbidden {
		t.Errorf("force-release with Host %s: %d, want 403", evil, code)
	}
	if info, err := p.Inspect(t.Context(), "payments"); err != nil || !info.Held {
		t.Errorf("after the refused force-release: %+v, %v; want still held", info, err)
	}
	for _, host := range []string{"localhost", "localhost:8090", "app.localhost:1", "127.0.0.1:8090", "[::1]:8090", "10.1.2.3", "OPS.example.com:8443", "ops.example.com."} {
		if code := do(t, srv, http.MethodGet, "/api/info", host, nil, ""); code != http.StatusOK {
			t.Errorf("GET /api/info with Host %s: %d, want 200", host, code)
		}
	}
	// The operator's own force-release, from the page's origin, passes.
	own := http.Header{"Content-Type": {"application/json"}, "Origin": {"http://localhost:8090"}, "Sec-Fetch-Site": {"same-origin"}}
	if code := do(t, srv, http.MethodPost, "/api/actions/force-release", "localhost:8090", own, body); code != http.StatusOK {
		t.Errorf("force-release from the page's own origin: %d, want 200", code)
	}

	open, _ := guarded(t, status.Config{AllowedHosts: []string{"*"}})
	if code := do(t, open, http.MethodGet, "/api/info", evil, nil, ""); code != http.StatusOK {
		t.Errorf(`AllowedHosts ["*"]: Host %s got %d, want 200`, evil, code)
	}
}

func jsonInt(n int64) string {
	b, _ := json.Marshal(n)
	return string(b)
}

// With a Token every request but /healthz needs it, as a bearer token or
// a basic-auth password.
func TestToken(t *testing.T) {
	t.Parallel()
	srv, _ := guarded(t, status.Config{Token: "s3cret-token"})
	host := "localhost"
	for _, c := range []struct {
		name   string
		header http.Header
		want   int
	}{
		{"none", nil, http.StatusUnauthorized},
		{"bearer", http.Header{"Authorization": {"Bearer s3cret-token"}}, http.StatusOK},
		{"wrong bearer", http.Header{"Authorization": {"Bearer s3cret"}}, http.StatusUnauthorized},
		{"basic", http.Header{"Authorization": {"Basic " + basic("anyone", "s3cret-token")}}, http.StatusOK},
		{"wrong basic", http.Header{"Authorization": {"Basic " + basic("s3cret-token", "x")}}, http.StatusUnauthorized},
	} {
		for _, path := range []string{"/", "/api/jobs", "/readyz"} {
			if code := do(t, srv, http.MethodGet, path, host, c.header, ""); code != c.want {
				t.Errorf("%s: GET %s: %d, want %d", c.name, path, code, c.want)
			}
		}
	}
	req, _ := http.NewRequest(http.MethodGet, srv.URL+"/api/info", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if got := resp.Header.Get("WWW-Authenticate"); !strings.HasPrefix(got, "Basic ") {
		t.Errorf("401 without WWW-Authenticate Basic (%q): a browser would not ask for the token", got)
	}
	if code := do(t, srv, http.MethodGet, "/healthz", host, nil, ""); code != http.StatusOK {
		t.Errorf("/healthz without the token: %d, want 200", code)
	}
}

func basic(user, pw string) string {
	r, _ := http.NewRequest(http.MethodGet, "/", nil)
	r.SetBasicAuth(user, pw)
	return strings.TrimPrefix(r.Header.Get("Authorization"), "Basic ")
}

// Bad AllowedHosts and Token values are refused by New.
func TestGuardConfig(t *testing.T) {
	t.Parallel()
	p, err := memory.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, cfg := range []status.Config{
		{AllowedHosts: []string{""}},
		{AllowedHosts: []string{"http://ops.example.com"}},
		{AllowedHosts: []string{"ops.example.com:8080"}},
		{AllowedHosts: []string{"*.example.com"}},
		{Token: "two words"},
		{Token: "tab\there"},
	} {
		cfg.Backends = []status.Backend{{Name: "memory", Provider: p}}
		var ve *batontype.ValidationError
		if _, err := status.New(&cfg); !errors.As(err, &ve) || !errors.Is(err, batontype.ErrInvalid) {
			t.Errorf("New(AllowedHosts %q, Token %q): %v, want a *ValidationError", cfg.AllowedHosts, cfg.Token, err)
		}
	}
}

// pausable returns a Redis provider on a private server (which the test
// may stall with CLIENT PAUSE) and a PostgreSQL provider, migrated.
func pausable(t *testing.T) (*testenv.RedisServer, *redisprovider.Provider, *pgprovider.Provider) {
	t.Helper()
	srv := testenv.StartRedis(t)
	rp, err := redisprovider.New(redisenv.Server(t, srv), &redisprovider.Config{Prefix: testenv.Prefix(t)})
	if err != nil {
		t.Fatal(err)
	}
	pp, err := pgprovider.New(pgenv.Schema(t).Pool, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := pp.Migrate(t.Context()); err != nil {
		t.Fatal(err)
	}
	return srv, rp, pp
}

// /healthz answers without reading a backend; /readyz checks every
// backend at once, each under the request's deadline: with a private
// Redis stalled (CLIENT PAUSE) PostgreSQL is still reported ready, Redis
// not, and the answer is 503.
func TestReadyz(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	srvRedis, rp, pp := pausable(t)
	// PostgreSQL must answer within the deadline on a loaded machine too.
	const timeout = 2 * time.Second
	h, err := status.New(&status.Config{Backends: []status.Backend{{Name: "redis", Provider: rp}, {Name: "postgres", Provider: pp}}, Timeout: timeout})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	type ready struct {
		Ready    bool
		Backends []struct {
			Name  string
			OK    bool
			MS    int64
			Error string
		}
	}
	get := func(path string) (int, ready) {
		resp, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var r ready
		_ = json.NewDecoder(resp.Body).Decode(&r)
		return resp.StatusCode, r
	}
	if code, r := get("/readyz"); code != http.StatusOK || !r.Ready || len(r.Backends) != 2 {
		t.Fatalf("readyz with both up: %d %+v", code, r)
	}
	// A separate connection pauses the server for every other client.
	pauser := redisenv.Server(t, srvRedis)
	if err := pauser.Do(ctx, "CLIENT", "PAUSE", (3 * timeout).Milliseconds(), "ALL").Err(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = pauser.Do(context.Background(), "CLIENT", "UNPAUSE").Err() })
	start := time.Now()
	code, r := get("/readyz")
	t.Logf("readyz with redis paused: %d in %v: %+v", code, time.Since(start).Round(time.Millisecond), r)
	if code != http.StatusServiceUnavailable || r.Ready {
		t.Errorf("readyz with redis paused: %d ready %v, want 503", code, r.Ready)
	}
	for _, b := range r.Backends {
		if want := b.Name == "postgres"; b.OK != want {
			t.Errorf("backend %s: ok %v, want %v (%s)", b.Name, b.OK, want, b.Error)
		}
	}
	if code, _ := get("/healthz"); code != http.StatusOK {
		t.Errorf("healthz with redis paused: %d, want 200", code)
	}
}

// With one backend stalled (a private Redis under CLIENT PAUSE) the Locks
// view still answers within one deadline with PostgreSQL's locks read
// now, and Redis's lock as last read, its source marked stale with the
// time of that read, beside the error.
func TestStalledBackendShowsStale(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	srvRedis, rp, pp := pausable(t)
	for _, p := range []lockprovider.Provider{rp, pp} {
		if _, err := p.Acquire(ctx, lockprovider.AcquireParams{Name: "payments", Owner: lockprovider.NewOwner(), AtMostFor: time.Hour}); err != nil {
			t.Fatal(err)
		}
	}
	const timeout = 2 * time.Second
	h, err := status.New(&status.Config{Backends: []status.Backend{{Name: "redis", Provider: rp}, {Name: "postgres", Provider: pp}},
		Timeout: timeout, Refresh: time.Nanosecond})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	type view struct {
		Locks   []struct{ Backend, Name string }
		Errors  []struct{ Backend, Error string }
		Sources []struct {
			Backend string
			Unknown bool
			Stale   bool
			AsOf    time.Time `json:"as_of"`
		}
	}
	var before view
	getJSON(t, srv.URL+"/api/locks", &before)
	read := time.Now()
	if len(before.Locks) != 2 || len(before.Errors) != 0 {
		t.Fatalf("locks with both up: %+v", before)
	}
	pauser := redisenv.Server(t, srvRedis)
	if err := pauser.Do(ctx, "CLIENT", "PAUSE", (3 * timeout).Milliseconds(), "ALL").Err(); err != nil {
		t.Fatal(err)
	}
	var during view
	start := time.Now()
	getJSON(t, srv.URL+"/api/locks", &during)
	t.Logf("locks with redis paused, in %v: %+v", time.Since(start).Round(time.Millisecond), during)
	if len(during.Locks) != 2 || len(during.Errors) == 0 {
		t.Errorf("locks with redis paused: %+v, want both locks and redis's errors", during)
	}
	for _, e := range during.Errors {
		if e.Backend != "redis" {
			t.Errorf("error from %s while only redis is paused: %s", e.Backend, e.Error)
		}
	}
	for _, s := range during.Sources {
		switch {
		case s.Backend == "postgres" && (s.Stale || s.Unknown):
			t.Errorf("postgres marked stale or unknown while only redis is paused: %+v", s)
		case s.Backend == "redis" && (!s.Stale || s.Unknown || s.AsOf.After(read) || s.AsOf.Before(read.Add(-time.Minute))):
			t.Errorf("redis while paused: %+v, want stale as of the first read (%v)", s, read)
		}
	}
}
