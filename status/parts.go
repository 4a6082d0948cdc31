package status

import (
	"context"
	"sync"
	"time"
)

// Views read their backends at once, each under the view's deadline
// (Config.Timeout), so one stalled backend delays no other's rows and the
// view answers within one deadline, not one per backend. A backend that
// could not be read is shown with what it held when last read whole,
// marked stale with that time, beside the error: what it holds now is
// unknown, but the last known state is what an operator needs during an
// outage.

// part is one backend's share of a view.
type part[T any] struct {
	items T
	errs  []backendError
	src   sourceJSON
}

// lastGood is a backend's part of a view as last read whole.
type lastGood struct {
	at   time.Time
	part any
}

// maxStale bounds how old a part shown as stale may be.
const maxStale = time.Hour

// readParts runs read for every backend at once and returns the parts of
// the backends it applies to, in Config.Backends order. With view set, a
// part whose backend could not be read (source unknown) is replaced by
// the backend's last whole part of that view, marked stale.
func readParts[T any](ctx context.Context, h *handler, view string, read func(context.Context, Backend) (part[T], bool)) []part[T] {
	bs := h.cfg.Backends
	parts := make([]part[T], len(bs))
	applies := make([]bool, len(bs))
	var wg sync.WaitGroup
	for i, b := range bs {
		wg.Go(func() { parts[i], applies[i] = read(ctx, b) })
	}
	wg.Wait()
	out := make([]part[T], 0, len(bs))
	for i, b := range bs {
		if !applies[i] {
			continue
		}
		p := parts[i]
		if view != "" {
			p = stale(h, view, b.Name, p)
		}
		out = append(out, p)
	}
	return out
}

// stale keeps p as the last whole part of view on backend, or, for a
// part that could not be read, returns the last whole one marked stale
// with its time and p's errors.
func stale[T any](h *handler, view, backend string, p part[T]) part[T] {
	key := view + "\x00" + backend
	h.mu.Lock()
	defer h.mu.Unlock()
	if !p.src.Unknown {
		h.good[key] = lastGood{at: time.Now(), part: p}
		return p
	}
	g, ok := h.good[key]
	if !ok || time.Since(g.at) > maxStale {
		return p
	}
	old := g.part.(part[T])
	old.errs = p.errs
	old.src.Stale, old.src.AsOf = true, g.at
	return old
}
