package observe

import (
	"context"

	"github.com/baton-go/baton/internal/isnil"
)

// Join returns an Observer that passes every event to each of obs in
// order, each seeing the context the one before returned, so that two
// observers may both derive contexts. Nil observers (typed nils included) are dropped; Join
// returns nil when none is left (so the caller's nil check keeps the
// no-observer path free) and the observer itself when one is.
func Join(obs ...Observer) Observer {
	var out multi
	for _, o := range obs {
		if isnil.IsNil(o) {
			continue
		}
		switch o := o.(type) {
		case multi:
			out = append(out, o...)
		default:
			out = append(out, o)
		}
	}
	switch len(out) {
	case 0:
		return nil
	case 1:
		return out[0]
	}
	return out
}

type multi []Observer

func (m multi) Observe(ctx context.Context, e Event) context.Context {
	for _, o := range m {
		ctx = o.Observe(ctx, e)
	}
	return ctx
}
