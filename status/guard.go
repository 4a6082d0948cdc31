package status

import (
	"context"
	"crypto/subtle"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/baton-go/baton/lockprovider"
)

// The gates every request passes before it is served: its Host must be
// one the page answers for, and, with Config.Token, it must carry the
// token.

// hostAllowed reports whether the page answers for the request's Host. A
// page the browser loaded from another name (DNS rebinding: a hostile
// name resolved to this server's address) sends that name, so only
// loopback names, IP addresses and Config.AllowedHosts are answered.
func (h *handler) hostAllowed(r *http.Request) bool {
	host := r.Host
	if hp, _, err := net.SplitHostPort(host); err == nil {
		host = hp
	}
	host = strings.ToLower(strings.TrimSuffix(strings.Trim(host, "[]"), "."))
	switch {
	case host == "":
		return false
	case host == "localhost" || strings.HasSuffix(host, ".localhost"):
		return true
	case net.ParseIP(host) != nil:
		return true
	}
	return h.hosts["*"] || h.hosts[host]
}

// authorized reports whether r carries Config.Token: as a bearer token,
// or as the password of HTTP basic authentication (any user name), which
// a browser asks for by itself.
func (h *handler) authorized(r *http.Request) bool {
	if h.cfg.Token == "" {
		return true
	}
	got := ""
	if _, pw, ok := r.BasicAuth(); ok {
		got = pw
	} else if v, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok {
		got = strings.TrimSpace(v)
	}
	return subtle.ConstantTimeCompare([]byte(got), []byte(h.cfg.Token)) == 1
}

// gate applies the gates; it reports whether to go on serving r.
func (h *handler) gate(w http.ResponseWriter, r *http.Request) bool {
	if !h.hostAllowed(r) {
		h.log.Warn("status: request for a host not allowed refused", "host", r.Host, "path", r.URL.Path, "remote", r.RemoteAddr)
		h.fail(w, http.StatusForbidden, "host "+r.Host+" is not allowed: add it to status.Config.AllowedHosts (baton serve --allowed-host)")
		return false
	}
	if strings.HasSuffix(r.URL.Path, "/healthz") || h.authorized(r) {
		return true
	}
	w.Header().Set("WWW-Authenticate", `Basic realm="baton status", charset="UTF-8"`)
	h.fail(w, http.StatusUnauthorized, "this page needs its token: as a bearer token, or as the password of basic authentication")
	return false
}

// healthz answers that the handler is up; it reads no backend.
func (h *handler) healthz(w http.ResponseWriter, r *http.Request) {
	h.reply(w, http.StatusOK, map[string]string{"status": "ok"})
}

type readyJSON struct {
	Ready    bool           `json:"ready"`
	Backends []backendReady `json:"backends"`
}

type backendReady struct {
	Name  string `json:"name"`
	OK    bool   `json:"ok"`
	MS    int64  `json:"ms"`
	Error string `json:"error,omitempty"`
}

// readyz checks every backend at once, each with one round trip under
// the request's deadline (a ping, or else the inspection of one name),
// and answers 200 when all answered, 503 otherwise.
func (h *handler) readyz(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := h.callCtx(r)
	defer cancel()
	out := readyJSON{Ready: true, Backends: []backendReady{}}
	code := http.StatusOK
	for _, p := range readParts(ctx, h, "", func(ctx context.Context, b Backend) (part[backendReady], bool) {
		start := time.Now()
		err := ready(ctx, b.Provider)
		br := backendReady{Name: b.Name, OK: err == nil, MS: time.Since(start).Milliseconds()}
		if err != nil {
			br.Error = err.Error()
		}
		return part[backendReady]{items: br}, true
	}) {
		out.Backends = append(out.Backends, p.items)
		if !p.items.OK {
			out.Ready, code = false, http.StatusServiceUnavailable
		}
	}
	h.reply(w, code, out)
}

// readyName is the name a backend without a ping is inspected for.
const readyName = "baton-status-readyz"

func ready(ctx context.Context, p lockprovider.Provider) error {
	switch p := p.(type) {
	case lockprovider.Admin:
		return p.Ping(ctx)
	case lockprovider.Inspector:
		_, err := p.Inspect(ctx, readyName)
		return err
	}
	return nil
}
