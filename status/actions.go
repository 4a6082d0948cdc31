package status

import (
	"context"
	"errors"
	"mime"
	"net/http"
	"time"

	"github.com/baton-go/baton/batontype"

	"github.com/baton-go/baton/lockprovider"
)

// Actions are POSTs with a JSON body. Each passes three gates before it
// acts: Config.Actions must be on (403 otherwise), the request must not
// come from another origin (http.CrossOriginProtection: 403), and the body
// must be JSON (415 otherwise), which a cross-site form cannot send
// without a CORS preflight the handler never approves.
func (h *handler) allowAction(w http.ResponseWriter, r *http.Request) bool {
	if !h.cfg.Actions {
		h.fail(w, http.StatusForbidden, "actions are disabled: the application did not enable them (status.Config.Actions, baton serve --actions)")
		return false
	}
	if err := h.cop.Check(r); err != nil {
		h.log.Warn("status: cross-origin action refused", "path", r.URL.Path, "origin", r.Header.Get("Origin"), "err", err)
		h.fail(w, http.StatusForbidden, "cross-origin request refused: "+err.Error())
		return false
	}
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
		h.fail(w, http.StatusUnsupportedMediaType, "an action's body must be application/json")
		return false
	}
	return true
}

// httpError is an action refused before it reached a backend.
type httpError struct {
	code int
	msg  string
}

func (e *httpError) Error() string { return e.msg }

// capability returns the named backend's provider as T.
func capability[T any](h *handler, name, what string) (Backend, T, error) {
	var zero T
	b, ok := h.backend(name)
	if !ok {
		return b, zero, &httpError{http.StatusNotFound, "no backend named " + name}
	}
	c, ok := b.Provider.(T)
	if !ok {
		return b, zero, &httpError{http.StatusNotImplemented, "backend " + name + " does not implement " + what}
	}
	return b, c, nil
}

// runAction serves one action: the gates of allowAction, the JSON body
// into a Req, do with a bounded context, a log line and the reply.
func runAction[Req any](h *handler, w http.ResponseWriter, r *http.Request, name string, do func(ctx context.Context, req Req) (any, error)) {
	if !h.allowAction(w, r) {
		return
	}
	var req Req
	if err := decode(r, &req); err != nil {
		h.fail(w, http.StatusBadRequest, err.Error())
		return
	}
	ctx, cancel := h.callCtx(r)
	defer cancel()
	ctx = context.WithValue(ctx, senderKey{}, pageBy(r))
	resp, err := do(ctx, req)
	h.log.Info("status: "+name, "request", req, "remote", r.RemoteAddr, "err", err)
	var he *httpError
	code := http.StatusBadGateway
	switch {
	case err == nil:
		h.dropCache()
		h.reply(w, http.StatusOK, resp)
		return
	case errors.As(err, &he):
		code = he.code
	case errors.Is(err, batontype.ErrInvalid):
		code = http.StatusBadRequest
	case errors.Is(err, batontype.ErrNotHeld):
		code = http.StatusConflict
	case errors.Is(err, batontype.ErrUnavailable):
		code = http.StatusServiceUnavailable
	}
	h.fail(w, code, name+": "+err.Error())
}

type forceReleaseReq struct {
	Backend string `json:"backend"`
	Name    string `json:"name"`
	// Token, when not zero, frees the lease only if it still has this
	// token, so an operator never frees the successor of the holder they
	// looked at.
	Token int64 `json:"token"`
}

type forceReleaseResp struct {
	Backend  string    `json:"backend"`
	Name     string    `json:"name"`
	LockedBy string    `json:"locked_by"`
	Token    int64     `json:"token"`
	Until    time.Time `json:"until,omitzero"`
}

func (h *handler) forceRelease(w http.ResponseWriter, r *http.Request) {
	runAction(h, w, r, "force-release", func(ctx context.Context, req forceReleaseReq) (any, error) {
		b, adm, err := capability[lockprovider.Admin](h, req.Backend, "lockprovider.Admin")
		if err != nil {
			return nil, err
		}
		// The backend records who released the run's lock on the run
		// (batontype.RunRecord.ReleasedBy), which the job page shows. The
		// page has no notion of trusted proxies, so it names the peer of
		// the connection, not a forwarded-for header anyone can set.
		info, err := adm.ForceRelease(ctx, lockprovider.ForceReleaseParams{Name: req.Name, Token: req.Token, By: pageBy(r)})
		if err != nil {
			return nil, err
		}
		return forceReleaseResp{Backend: b.Name, Name: info.Name, LockedBy: info.LockedBy, Token: info.Token, Until: info.Until}, nil
	})
}

// pageBy names a request's sender as a force-release records it:
// "page:" and the remote address, cut to what a provider stores.
func pageBy(r *http.Request) string {
	return batontype.Shorten("page:"+r.RemoteAddr, batontype.MaxLockedByLen-len("…"))
}

type resetRateReq struct {
	Backend string `json:"backend"`
	Key     string `json:"key"`
}

func (h *handler) resetRate(w http.ResponseWriter, r *http.Request) {
	runAction(h, w, r, "reset rate-limit key", func(ctx context.Context, req resetRateReq) (any, error) {
		_, adm, err := capability[lockprovider.Admin](h, req.Backend, "lockprovider.Admin")
		if err != nil {
			return nil, err
		}
		return req, adm.ResetRate(ctx, req.Key)
	})
}

type jobActionReq struct {
	Backend string `json:"backend"`
	Job     string `json:"job"`
	Action  string `json:"action"` // "run", "pause" or "resume"
}

type jobActionResp struct {
	jobActionReq
	// For run: the request as recorded, when the Control says (see
	// ProviderControl); the page follows it to the run it started.
	RequestID string    `json:"request_id,omitempty"`
	Requested time.Time `json:"requested"` // when the handler made the request
}

// runRequester is a Control that returns the run request it recorded.
type runRequester interface {
	requestRun(ctx context.Context, job string) (batontype.RunRequest, error)
}

func (h *handler) jobAction(w http.ResponseWriter, r *http.Request) {
	runAction(h, w, r, "job action", func(ctx context.Context, req jobActionReq) (any, error) {
		b, ok := h.backend(req.Backend)
		if !ok {
			return nil, &httpError{http.StatusNotFound, "no backend named " + req.Backend}
		}
		if req.Action != "run" && req.Action != "pause" && req.Action != "resume" {
			return nil, &httpError{http.StatusBadRequest, "action must be run, pause or resume"}
		}
		// A job no live instance of this backend has is 404, as the CLI
		// exits 3: a request for it would only lapse, and a pause flag
		// would wait for a job that may never come.
		if _, err := h.findJob(ctx, req.Backend, req.Job); err != nil {
			return nil, err
		}
		if b.Control == nil {
			return nil, &httpError{http.StatusNotImplemented, "backend " + b.Name + " has no job control (status.Backend.Control)"}
		}
		resp := jobActionResp{jobActionReq: req, Requested: time.Now()}
		switch req.Action {
		case "run":
			if rr, ok := b.Control.(runRequester); ok {
				rq, err := rr.requestRun(ctx, req.Job)
				resp.RequestID = rq.ID
				return resp, err
			}
			return resp, b.Control.RunNow(ctx, req.Job)
		case "pause":
			return resp, b.Control.Pause(ctx, req.Job)
		}
		return resp, b.Control.Resume(ctx, req.Job)
	})
}
