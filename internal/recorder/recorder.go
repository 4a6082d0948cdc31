// Package recorder is an observe.Observer that keeps every event, for the
// tests of the packages that emit them.
package recorder

import (
	"context"
	"slices"
	"sync"

	"github.com/baton-go/baton/observe"
)

// Recorder records events. Safe for concurrent use.
type Recorder struct {
	mu     sync.Mutex
	events []observe.Event
}

// Observe records e and returns ctx.
func (r *Recorder) Observe(ctx context.Context, e observe.Event) context.Context {
	r.mu.Lock()
	r.events = append(r.events, e)
	r.mu.Unlock()
	return ctx
}

// Events returns the events recorded so far, of the given kinds (all
// when none is given), in order.
func (r *Recorder) Events(kinds ...observe.Kind) []observe.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []observe.Event
	for _, e := range r.events {
		if len(kinds) == 0 || slices.Contains(kinds, e.Kind) {
			out = append(out, e)
		}
	}
	return out
}

// Kinds returns the kinds of the events recorded so far, in order.
func (r *Recorder) Kinds() []observe.Kind {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]observe.Kind, len(r.events))
	for i, e := range r.events {
		out[i] = e.Kind
	}
	return out
}
