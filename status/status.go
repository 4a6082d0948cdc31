package status

import (
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"net/url"
	"path"
	"strings"
	"sync"
	"time"

	"github.com/baton-go/baton/batontype"

	"github.com/baton-go/baton/lockprovider"
)

//go:embed assets
var assets embed.FS

// Backend is one provider the page reads, under a name shown next to
// everything that comes from it ("redis", "postgres"). Each view uses
// every backend that implements the capability it needs: Jobs and
// Timeline the lockprovider.Registry and lockprovider.Ledger, Locks the
// lockprovider.Inspector, Rate limits the lockprovider.RateLister (and
// lockprovider.RateLimiter for what remains); the actions need
// lockprovider.Admin. A deployment that keeps jobs in Redis and locks in
// PostgreSQL lists both.
type Backend struct {
	// Name is shown next to what comes from this backend: 1 to 64 bytes
	// of printable text, unique among Backends. Required: no default.
	Name string
	// Provider is the backend read. Required: no default.
	Provider lockprovider.Provider
	// Source says what this backend reads, for the empty states of the
	// views ("No lock is held in …"): e.g. `prefix "baton:" on
	// 10.0.0.5:6379` or `schema "ops"`. Empty shows Name alone.
	Source string
	// Control, when set and Config.Actions is on, adds run-now, pause and
	// resume to the jobs of this backend. Nil means none: the jobs of
	// this backend have no such buttons.
	Control Control
}

// Control is what the Jobs view's run-now, pause and resume buttons call.
// The page offers them only when a backend has a Control and actions are
// enabled.
type Control interface {
	RunNow(ctx context.Context, job string) error
	Pause(ctx context.Context, job string) error
	Resume(ctx context.Context, job string) error
}

// Config configures the handler. The zero value of each field but
// Backends means its documented default.
type Config struct {
	// Backends are the providers shown; at least one, with unique names.
	// Required: there is no default.
	Backends []Backend

	// Actions enables the state-changing requests: force-releasing a
	// lock, resetting a rate-limit key and, with a Backend.Control,
	// run-now, pause and resume. Off by default: the page is read-only
	// and POSTs are refused with 403 Forbidden.
	Actions bool

	// TrustedOrigins are origins ("https://ops.example.com") besides the
	// page's own from which browsers may send actions, for a page behind
	// a proxy that rewrites the Host. See http.CrossOriginProtection. Nil
	// means the page's own origin only.
	TrustedOrigins []string

	// AllowedHosts are the host names (the request's Host without its
	// port, e.g. "ops.example.com") the handler answers for besides
	// loopback names ("localhost", "*.localhost") and IP addresses, which
	// it always answers for. Any other Host gets 403 Forbidden, reads and
	// actions alike: a hostile page that had its own name resolve to this
	// server (DNS rebinding) sends that name, and binding to loopback does
	// not stop it. "*" answers for every name, for a handler behind a
	// proxy that checks the Host itself. Nil means none besides the above.
	AllowedHosts []string

	// Token, when set, is required of every request but /healthz: as a
	// bearer token ("Authorization: Bearer …") or as the password of HTTP
	// basic authentication with any user name, which browsers prompt for.
	// Requests without it get 401. Empty means none: mount the handler
	// behind the application's own authentication.
	Token string

	// Limits returns the application's limits of a rate-limit key, so the
	// Rate limits view can show what remains and mark keys near or over
	// their limit. Nil shows only when each key is full again (the
	// backend stores state, not limits).
	Limits func(key string) []batontype.RateLimit

	// Grace is how long after its tick a run may start before the tick
	// counts as missed. Zero means DefaultGrace (one minute).
	Grace time.Duration

	// Timeout bounds the backend calls of one request. Zero means
	// DefaultTimeout (10s).
	Timeout time.Duration

	// Refresh is how often the page polls, and how long a computed view
	// is reused for every viewer, so that many open pages cost the
	// backends no more than one. Zero means DefaultRefresh (2s).
	Refresh time.Duration

	// Logger receives backend errors at warn and every action at info.
	// Nil discards them.
	Logger *slog.Logger
}

// Defaults of Config.
const (
	DefaultGrace   = time.Minute
	DefaultTimeout = 10 * time.Second
	DefaultRefresh = 2 * time.Second
)

func invalid(field, value, reason string) error {
	return &batontype.ValidationError{Pkg: "status", Field: field, Value: value, Reason: reason, Err: batontype.ErrInvalid}
}

// handler serves the page and its JSON endpoints.
type handler struct {
	cfg Config
	log *slog.Logger
	cop *http.CrossOriginProtection
	// hosts are Config.AllowedHosts, lower-cased.
	hosts map[string]bool

	mu    sync.Mutex
	cache map[string]cached
	good  map[string]lastGood // by view and backend: see readParts
}

type cached struct {
	at   time.Time
	body []byte
}

// New returns the status page as an http.Handler. It serves the page at
// the path it is mounted on (with a trailing slash) and its assets and
// JSON endpoints below it, with relative links only, so it works under
// any prefix: behind http.StripPrefix or directly on a mux pattern such as
// "/ops/baton/". Mount it behind the application's own authentication.
// The fields of cfg not set have their documented defaults; Backends is
// required, so a nil cfg is refused like an empty Backends. New copies
// cfg.
func New(cfg *Config) (http.Handler, error) {
	if cfg == nil {
		cfg = &Config{}
	}
	return newHandler(*cfg)
}

func newHandler(cfg Config) (http.Handler, error) {
	if len(cfg.Backends) == 0 {
		return nil, invalid("Backends", "[]", "at least one backend is needed")
	}
	seen := map[string]bool{}
	for _, b := range cfg.Backends {
		switch {
		case b.Name == "" || len(b.Name) > 64 || strings.ContainsFunc(b.Name, func(r rune) bool { return r < 0x20 || r == 0x7f }):
			return nil, invalid("Backend.Name", fmt.Sprintf("%q", b.Name), "must be 1 to 64 bytes of printable text")
		case seen[b.Name]:
			return nil, invalid("Backend.Name", fmt.Sprintf("%q", b.Name), "is used twice")
		case b.Provider == nil:
			return nil, invalid("Backend.Provider", b.Name, "must not be nil")
		}
		seen[b.Name] = true
	}
	switch {
	case cfg.Grace < 0:
		return nil, &batontype.ValidationError{Pkg: "status", Field: "Grace", Value: cfg.Grace.String(), Reason: "must not be negative", Err: batontype.ErrInvalidDuration}
	case cfg.Timeout < 0:
		return nil, &batontype.ValidationError{Pkg: "status", Field: "Timeout", Value: cfg.Timeout.String(), Reason: "must not be negative", Err: batontype.ErrInvalidDuration}
	case cfg.Refresh < 0:
		return nil, &batontype.ValidationError{Pkg: "status", Field: "Refresh", Value: cfg.Refresh.String(), Reason: "must not be negative", Err: batontype.ErrInvalidDuration}
	}
	if cfg.Grace == 0 {
		cfg.Grace = DefaultGrace
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.Refresh == 0 {
		cfg.Refresh = DefaultRefresh
	}
	h := &handler{cfg: cfg, log: cfg.Logger, cop: http.NewCrossOriginProtection(), cache: map[string]cached{}, good: map[string]lastGood{}}
	if h.log == nil {
		h.log = slog.New(slog.DiscardHandler)
	}
	h.hosts = map[string]bool{}
	for _, host := range cfg.AllowedHosts {
		if host != "*" && (host == "" || strings.ContainsAny(host, ":/*[]@") || strings.ContainsFunc(host, func(r rune) bool { return r <= ' ' || r == 0x7f })) {
			return nil, invalid("AllowedHosts", fmt.Sprintf("%q", host), "must be a host name without scheme, port or path, or \"*\"")
		}
		h.hosts[strings.ToLower(strings.TrimSuffix(host, "."))] = true
	}
	if strings.ContainsFunc(cfg.Token, func(r rune) bool { return r <= ' ' || r == 0x7f }) {
		return nil, invalid("Token", "(not shown)", "must not contain spaces or control characters")
	}
	for _, o := range cfg.TrustedOrigins {
		if err := h.cop.AddTrustedOrigin(o); err != nil {
			return nil, invalid("TrustedOrigins", fmt.Sprintf("%q", o), err.Error())
		}
	}
	return h, nil
}

// routes maps the last segments of a request path to their handlers.
var routes = []struct {
	suffix string
	method string
	serve  func(h *handler, w http.ResponseWriter, r *http.Request)
}{
	{"/healthz", http.MethodGet, (*handler).healthz},
	{"/readyz", http.MethodGet, (*handler).readyz},
	{"/api/info", http.MethodGet, (*handler).info},
	{"/api/jobs", http.MethodGet, (*handler).jobs},
	{"/api/timeline", http.MethodGet, (*handler).timeline},
	{"/api/job", http.MethodGet, (*handler).job},
	{"/api/locks", http.MethodGet, (*handler).locks},
	{"/api/limits", http.MethodGet, (*handler).limits},
	{"/api/actions/force-release", http.MethodPost, (*handler).forceRelease},
	{"/api/actions/reset-rate", http.MethodPost, (*handler).resetRate},
	{"/api/actions/job", http.MethodPost, (*handler).jobAction},
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'")
	w.Header().Set("Referrer-Policy", "same-origin")
	if !h.gate(w, r) {
		return
	}
	p := r.URL.Path
	if p == "" {
		// Mounted with http.StripPrefix("/x", …) and asked for "/x": the
		// page's relative links need the trailing slash.
		u, err := url.ParseRequestURI(r.RequestURI)
		if err != nil {
			http.NotFound(w, r)
			return
		}
		u.Path += "/"
		http.Redirect(w, r, u.RequestURI(), http.StatusMovedPermanently)
		return
	}
	for _, rt := range routes {
		if !strings.HasSuffix(p, rt.suffix) {
			continue
		}
		if r.Method != rt.method && !(rt.method == http.MethodGet && r.Method == http.MethodHead) {
			w.Header().Set("Allow", rt.method)
			h.fail(w, http.StatusMethodNotAllowed, rt.suffix[1:]+" takes "+rt.method)
			return
		}
		rt.serve(h, w, r)
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		h.fail(w, http.StatusMethodNotAllowed, "the page is read with GET")
		return
	}
	if i := strings.LastIndex(p, "/assets/"); i >= 0 {
		name := p[i+1:]
		b, err := assets.ReadFile(name)
		if err != nil || strings.Count(name, "/") != 1 {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", mime.TypeByExtension(path.Ext(name)))
		w.Header().Set("Cache-Control", "no-cache")
		_, _ = w.Write(b)
		return
	}
	if strings.HasSuffix(p, "/") || strings.HasSuffix(p, "/index.html") {
		page, _ := assets.ReadFile("assets/index.html")
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Cache-Control", "no-cache")
		_, _ = w.Write(page)
		return
	}
	http.NotFound(w, r)
}

// errorJSON is the body of every refused or failed request.
type errorJSON struct {
	Error string `json:"error"`
}

func (h *handler) fail(w http.ResponseWriter, code int, msg string) {
	h.reply(w, code, errorJSON{Error: msg})
}

func (h *handler) reply(w http.ResponseWriter, code int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		code, b = http.StatusInternalServerError, []byte(`{"error":"encoding the response failed"}`)
	}
	h.write(w, code, b)
}

func (h *handler) write(w http.ResponseWriter, code int, b []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	_, _ = w.Write(b)
}

// cachedView serves the view key from the cache when it is younger than
// Config.Refresh, and otherwise computes it with build.
func (h *handler) cachedView(w http.ResponseWriter, r *http.Request, key string, build func(ctx context.Context) any) {
	h.mu.Lock()
	c, ok := h.cache[key]
	h.mu.Unlock()
	if ok && time.Since(c.at) < h.cfg.Refresh {
		h.write(w, http.StatusOK, c.body)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), h.cfg.Timeout)
	defer cancel()
	v := build(ctx)
	b, err := json.Marshal(v)
	if err != nil {
		h.fail(w, http.StatusInternalServerError, "encoding the response failed")
		return
	}
	h.mu.Lock()
	for k, e := range h.cache { // drop stale entries so the cache stays small
		if time.Since(e.at) >= h.cfg.Refresh {
			delete(h.cache, k)
		}
	}
	h.cache[key] = cached{at: time.Now(), body: b}
	h.mu.Unlock()
	h.write(w, http.StatusOK, b)
}

// backendError is a backend that could not answer for a view.
type backendError struct {
	Backend string `json:"backend"`
	Error   string `json:"error"`
}

func (h *handler) backendErr(errs *[]backendError, b Backend, what string, err error) {
	h.log.Warn("status: backend error", "backend", b.Name, "what", what, "err", err)
	*errs = append(*errs, backendError{Backend: b.Name, Error: what + ": " + err.Error()})
}

// backend returns the backend named name.
func (h *handler) backend(name string) (Backend, bool) {
	for _, b := range h.cfg.Backends {
		if b.Name == name {
			return b, true
		}
	}
	return Backend{}, false
}

type infoJSON struct {
	Actions   bool          `json:"actions"`
	RefreshMS int64         `json:"refresh_ms"`
	GraceMS   int64         `json:"grace_ms"`
	Backends  []backendInfo `json:"backends"`
	Now       time.Time     `json:"now"`
}

type backendInfo struct {
	Name         string   `json:"name"`
	Capabilities []string `json:"capabilities"`
	Control      bool     `json:"control"`
}

func (h *handler) info(w http.ResponseWriter, r *http.Request) {
	out := infoJSON{Actions: h.cfg.Actions, RefreshMS: h.cfg.Refresh.Milliseconds(), GraceMS: h.cfg.Grace.Milliseconds(), Now: time.Now()}
	for _, b := range h.cfg.Backends {
		bi := backendInfo{Name: b.Name, Capabilities: []string{}, Control: b.Control != nil && h.cfg.Actions}
		for _, c := range []struct {
			name string
			ok   bool
		}{
			{"registry", is[lockprovider.Registry](b.Provider)},
			{"ledger", is[lockprovider.Ledger](b.Provider)},
			{"inspector", is[lockprovider.Inspector](b.Provider)},
			{"rate_lister", is[lockprovider.RateLister](b.Provider)},
			{"admin", is[lockprovider.Admin](b.Provider)},
		} {
			if c.ok {
				bi.Capabilities = append(bi.Capabilities, c.name)
			}
		}
		out.Backends = append(out.Backends, bi)
	}
	h.reply(w, http.StatusOK, out)
}

func is[T any](p lockprovider.Provider) bool {
	_, ok := p.(T)
	return ok
}

// decode reads a JSON action body into v, at most 64 KiB.
func decode(r *http.Request, v any) error {
	dec := json.NewDecoder(io.LimitReader(r.Body, 64<<10))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return errors.New("the body must be a JSON object: " + err.Error())
	}
	return nil
}

func (h *handler) callCtx(r *http.Request) (context.Context, context.CancelFunc) {
	return context.WithTimeout(r.Context(), h.cfg.Timeout)
}

// dropCache forgets every computed view, so the page shows an action's
// effect at its next poll.
func (h *handler) dropCache() {
	h.mu.Lock()
	clear(h.cache)
	h.mu.Unlock()
}
