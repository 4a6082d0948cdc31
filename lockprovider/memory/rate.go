package memory

import (
	"context"
	"math"
	"sort"
	"sync"
	"time"

	"github.com/baton-go/baton/batontype"
	"github.com/baton-go/baton/internal/check"
	"github.com/baton-go/baton/internal/ratemath"
	"github.com/baton-go/baton/internal/ratewire"
	"github.com/baton-go/baton/lockprovider"
)

// rateState holds the rate-limit state of a Provider: one entry per key and
// limit. Entries that no longer affect decisions are swept every
// sweepEvery decisions, so the map stays bounded by the keys active within
// their longest period.
type rateState struct {
	mu      sync.Mutex
	entries map[rateKey]*rateEntry
	calls   uint64
}

const sweepEvery = 1024

type rateKey struct{ key, id string }

// rateEntry is one limit's state. The meaning of a, b and c depends on the
// algorithm, as in the Redis and PostgreSQL providers:
//
//	fixed_window    a window index, b count
//	sliding_window  a window index, b current count, c previous count
//	token_bucket    a tokens (1 token = Period/gcd units), b last update µs
//	gcra            a theoretical arrival time µs, b fraction (1/(Rate/gcd) µs)
//	sliding_log     log: admission times µs, ascending
type rateEntry struct {
	a, b, c int64
	log     []int64
	expires int64 // µs; the entry is dead at and after this instant
}

// RateLimit implements lockprovider.RateLimiter. The provider's clock
// (Config.Now) is the server clock.
func (p *Provider) RateLimit(ctx context.Context, r lockprovider.RateRequest) (lockprovider.RateResult, error) {
	if err := check.Live(ctx, r.Validate()); err != nil {
		return lockprovider.RateResult{}, err
	}
	s := &p.rate
	s.mu.Lock()
	defer s.mu.Unlock()
	now := p.now().UnixMicro()
	if s.entries == nil {
		s.entries = make(map[rateKey]*rateEntry)
	}
	s.calls++
	if s.calls%sweepEvery == 0 {
		for k, e := range s.entries {
			if e.expires <= now {
				delete(s.entries, k)
			}
		}
	}
	es := make([]*rateEntry, len(r.Limits))
	for i, l := range r.Limits {
		k := rateKey{r.Key, ratewire.ID(l)}
		e := s.entries[k]
		if e == nil || e.expires <= now {
			e = &rateEntry{}
			if l.Algorithm == batontype.TokenBucket {
				p, _ := ratewire.Reduced(l)
				e.a, e.b = l.Capacity()*p, now
			}
			if l.Algorithm == batontype.GCRA {
				e.a = now
			}
		}
		es[i] = e
	}
	v := decide(now, r, es)
	for i, l := range r.Limits {
		if es[i].expires > now {
			s.entries[rateKey{r.Key, ratewire.ID(l)}] = es[i]
		} else {
			delete(s.entries, rateKey{r.Key, ratewire.ID(l)})
		}
	}
	return ratewire.Decode(v, len(r.Limits))
}

// decide is the reference implementation of the decision, shared in
// substance with rate.lua (Redis) and the PostgreSQL function: it
// normalizes each entry at now (which never changes what it admits),
// computes how long each limit needs before it admits r.N, and charges all
// limits only if the longest of those waits is within r.MaxDelay. Entries
// are updated in place only when something is charged or refunded; expires
// is set then. It returns the flat reply of ratewire.Decode.
func decide(now int64, r lockprovider.RateRequest, es []*rateEntry) []int64 {
	nl := len(r.Limits)
	n := r.N
	out := make([]int64, ratewire.ReplyHeader+ratewire.PerLimit*nl)
	out[1] = now
	d := make([]int64, nl)
	var D int64
	for i, l := range r.Limits {
		e := es[i]
		P := int64(l.Period / time.Microsecond)
		L := l.Rate
		p, q := ratewire.Reduced(l)
		switch l.Algorithm {
		case batontype.FixedWindow:
			if w := now / P; e.a < w {
				e.a, e.b = w, 0
			}
			if e.b+n > L {
				d[i] = (e.a+1)*P - now
			}
		case batontype.SlidingLog:
			cut := sort.Search(len(e.log), func(j int) bool { return e.log[j] > now-P })
			e.log = e.log[cut:]
			c := int64(len(e.log))
			if c+n > L {
				d[i] = max(1, e.log[c+n-L-1]+P-now)
			}
		case batontype.SlidingWindow:
			w := now / P
			switch {
			case e.a == w-1:
				e.a, e.b, e.c = w, 0, e.b
			case e.a < w-1:
				e.a, e.b, e.c = w, 0, 0
			}
			el := max(0, now-e.a*P)
			est := float64(e.c) * float64(P-el) / float64(P)
			if est+float64(e.b+n) > float64(L) {
				if e.b+n <= L {
					// Later in this window, once enough of the previous
					// window has slid out.
					ep := P - int64(math.Floor(float64(L-e.b-n)*float64(P)/float64(e.c)))
					d[i] = max(1, ep-el)
				} else {
					// In the next window, where this window is previous.
					var ep int64
					if e.b > 0 {
						ep = max(0, P-int64(math.Floor(float64(L-n)*float64(P)/float64(e.b))))
					}
					d[i] = P - el + ep
				}
			}
		case batontype.TokenBucket:
			e.a = tbTokens(e.a, e.b, now, l.Capacity()*p, q)
			e.b = now
			if req := n * p; e.a < req {
				d[i] = ceilDiv(req-e.a, q)
			}
		case batontype.GCRA:
			if e.a < now {
				e.a, e.b = now, 0
			}
			s := e.b + n*p
			nt, nf := e.a+floorDiv(s, q), floorMod(s, q)
			d[i] = max(0, nt-now-floorDiv(l.Capacity()*p-nf, q))
		}
		D = max(D, d[i])
	}
	allowed := D <= int64(r.MaxDelay/time.Microsecond)
	for _, l := range r.Limits {
		if _, q := ratewire.Reduced(l); l.Algorithm == batontype.TokenBucket && D > ratemath.MaxProduct/q {
			allowed = false // the debt would not be representable exactly
		}
	}
	charge := allowed && n > 0
	if r.Refund {
		allowed, charge, D = true, false, 0
	}
	for i, l := range r.Limits {
		e := es[i]
		P := int64(l.Period / time.Microsecond)
		L := l.Rate
		p, q := ratewire.Reduced(l)
		var rem, reset int64
		switch l.Algorithm {
		case batontype.FixedWindow:
			if charge {
				e.b += n
				e.expires = (e.a + 1) * P
			}
			rem = L - e.b
			if e.b > 0 {
				reset = (e.a+1)*P - now
			}
		case batontype.SlidingLog:
			if charge {
				j := sort.Search(len(e.log), func(j int) bool { return e.log[j] > now })
				add := make([]int64, n)
				for k := range add {
					add[k] = now
				}
				e.log = append(e.log[:j], append(add, e.log[j:]...)...)
				e.expires = e.log[len(e.log)-1] + P
			}
			rem = L - int64(len(e.log))
			if c := len(e.log); c > 0 {
				reset = max(0, e.log[c-1]+P-now)
			}
		case batontype.SlidingWindow:
			el := max(0, now-e.a*P)
			if charge {
				e.b += n
			}
			est := float64(e.c) * float64(P-el) / float64(P)
			rem = int64(math.Floor(float64(L) - est - float64(e.b)))
			switch {
			case e.b > 0:
				reset = 2*P - el
			case e.c > 0:
				reset = P - el
			}
			if charge {
				e.expires = now + reset
			}
		case batontype.TokenBucket:
			C := l.Capacity() * p
			switch {
			case charge:
				e.a = min(C-D*q, e.a) - n*p
			case r.Refund:
				e.a = min(C, e.a+n*p)
			}
			rem = floorDiv(e.a, p)
			reset = ceilDiv(C-e.a, q)
			if charge || r.Refund {
				e.expires = now + reset
			}
		case batontype.GCRA:
			switch {
			case charge:
				if ts := now + D; e.a < ts {
					e.a, e.b = ts, 0
				}
				s := e.b + n*p
				e.a, e.b = e.a+floorDiv(s, q), floorMod(s, q)
			case r.Refund:
				s := e.b - n*p
				e.a, e.b = e.a+floorDiv(s, q), floorMod(s, q)
				if e.a < now {
					e.a, e.b = now, 0
				}
			}
			dt := e.a - now
			tau := l.Capacity() * p
			if dt <= tau/q+1 {
				rem = floorDiv(tau-dt*q-e.b, p)
			}
			reset = dt
			if e.b > 0 {
				reset++
			}
			if charge || r.Refund {
				e.expires = now + reset
			}
		}
		w := out[ratewire.ReplyHeader+ratewire.PerLimit*i:]
		w[0], w[1], w[2] = max(0, rem), d[i], reset
	}
	if allowed {
		out[0] = 1
	}
	out[2] = D
	if r.Refund || n == 0 {
		out[2] = 0
	}
	return out
}

// tbTokens returns a bucket's tokens at now: tok at last, refilled at q
// units per µs, capped at C. A clock that went back refills nothing.
func tbTokens(tok, last, now, C, q int64) int64 {
	el := max(0, now-last)
	need := C - tok
	if need <= 0 || el >= ceilDiv(need, q) {
		return C
	}
	return tok + el*q
}

func floorDiv(a, b int64) int64 {
	d := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		d--
	}
	return d
}

func floorMod(a, b int64) int64 { return a - floorDiv(a, b)*b }

func ceilDiv(a, b int64) int64 { return -floorDiv(-a, b) }
