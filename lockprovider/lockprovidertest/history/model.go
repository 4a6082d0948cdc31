package history

import (
	"fmt"
	"hash/maphash"
	"math"
	"time"

	"github.com/anishathalye/porcupine"
)

// The lease model, per name. A state is what the backend holds for the name
// as far as the history can tell, and the earliest instant the last
// linearized operation can have taken effect at. Instants are chosen as
// early as the operation allows: every later constraint is of the form
// "not before", so the earliest choice never rules out a history that a
// later one would allow. Where an instant cannot be known (a release's,
// whose reply carries no time) the end of the lease is kept as an
// interval: grants by others are judged against its start and refusals
// against its end.
type state struct {
	lo int64 // earliest instant of the last linearized operation

	holder    string // owner of the current or last lease; "" for none
	token     int64  // its token; 0 when its grant was never seen (unknown outcome)
	granted   int64  // its grant time
	untilLo   int64  // the lease ends at or after untilLo ...
	untilHi   int64  // ... and at or before untilHi
	atLeast   int64  // end of its minimum hold (0: none) at the earliest ...
	atLeastHi int64  // ... and at the latest (they differ for a grant of unknown outcome)
	phase     phase

	last int64 // largest token seen granted
	tick int64 // newest tick granted (noTick: none)
}

// noTick is the tick of a name never granted one: ticks before the
// history's start are negative.
const noTick = math.MinInt64

type phase uint8

const (
	held     phase = iota // the holder may extend and release it
	released              // released inside its minimum hold: the holder's calls may or may not still act
	ended                 // force-released: the holder's calls must fail
)

// bounds are the model's tolerances on the history's axis.
type bounds struct {
	skew      int64 // backend clock against the local one, plus rounding
	linger    int64 // how long after its end a lease may still refuse others
	tickGrant bool  // see Config.TickAfterGrant
	deferred  bool  // grants seen after their reported time, up to the reply: Config.ClientGrantTime, RowLocks
	client    bool  // Config.ClientGrantTime: the backend counts a lease from the request's arrival
	resends   bool  // Config.Resends: a not-held answer may follow an earlier send that acted
	delivery  int64 // see Config.Delivery
}

// arrival is the latest end on the backend of a time t the reply reports
// as counted from the client's clock at from: a provider whose backend
// counts the lease from the request's arrival (Redlock's masters, from
// each SET) may hold it until the reply plus the same length.
func (b bounds) arrival(op *Op, t, from int64) int64 {
	if !b.client {
		return t
	}
	return max(t, op.Return+t-from)
}

// late is the latest instant an operation of unknown outcome can have
// taken effect at: a request held by the network reaches the backend up
// to b.delivery after its caller gave up.
func (b bounds) late(op *Op, start int64) int64 {
	return max(start, op.Return+b.delivery)
}

// latest is the last instant at which an operation of unknown outcome may
// take effect: its delivery bound, give or take the skew.
func (b bounds) latest(op *Op) int64 { return op.Return + b.delivery + b.skew }

// tickOK reports whether a grant for tick is allowed in s.
func (s *state) tickOK(b bounds, tick int64) bool {
	if tick == 0 {
		return true
	}
	return tick > s.tick
}

// tickStale reports whether a refusal of tick as stale is explained in s.
func (s *state) tickStale(b bounds, tick int64) bool {
	return tick != 0 && (tick <= s.tick || b.tickGrant && s.holder != "" && tick <= s.granted+b.skew)
}

// free reports whether another owner may be granted the name at t.
func (s *state) free(b bounds, t int64) bool {
	return s.holder == "" || t >= s.untilLo-b.skew
}

// live reports whether the lease may still be in force at t for its holder.
func (s *state) live(b bounds, t int64) bool {
	return s.holder != "" && s.phase != ended && t < s.untilHi+b.skew
}

// refuses reports whether a refusal of owner at t can be explained by a
// lease in force: another holder's, or the requester's own lease kept by
// its minimum hold or ended by force.
func (s *state) refuses(b bounds, owner string, t int64) bool {
	if s.holder == "" || t >= s.untilHi+b.linger+b.skew {
		return false
	}
	return s.holder != owner || s.phase != held
}

func near(a, b, tol int64) bool { return a-b <= tol && b-a <= tol }

// step applies op to s and returns every state it can lead to; none means
// op is impossible in s.
func step(b bounds, s state, op *Op) []state {
	start := max(s.lo, op.Call)
	if op.Result == Unknown && start > b.latest(op) {
		return []state{s} // too late to take effect
	}
	switch op.Kind {
	case Acquire:
		return acquire(b, s, op, start)
	case Extend:
		return extend(b, s, op, start)
	case Release:
		return release(b, s, op, start)
	case ForceRelease:
		return forceRelease(b, s, op, start)
	case Inspect:
		return inspect(b, s, op, start)
	}
	return nil
}

// round is the rounding a backend may apply to durations it stores.
const round = int64(2 * time.Millisecond)

func acquire(b bounds, s state, op *Op, start int64) []state {
	switch op.Result {
	case OK:
		var out []state
		g := op.Lease
		// The holder's repeated acquire returns the grant it has.
		if s.holder == op.Owner && s.phase != ended && s.live(b, start) && (s.token == 0 || g.Token == s.token) &&
			(s.token == 0 || near(g.GrantedAt, s.granted, round)) && start <= op.Return+b.skew {
			n := s
			n.lo = start
			if s.token == 0 {
				if g.Token <= s.last {
					return nil
				}
				n.token, n.last, n.granted = g.Token, g.Token, g.GrantedAt
				n.untilLo, n.untilHi, n.atLeast, n.atLeastHi = g.Until, g.Until, g.AtLeastUntil, g.AtLeastUntil
			}
			out = append(out, n)
		}
		// A new grant at the backend's GrantedAt, or, for a provider
		// whose grant is seen later (b.deferred), at the first instant
		// after it, and after the operation linearized before, at which
		// the name was free.
		p := g.GrantedAt
		if b.deferred {
			// The send (or the statement's clock), not the grant: the
			// grant came after it and after every operation linearized
			// before this one (a request a stalled network held is
			// granted when it heals, its lease possibly over by then;
			// a transaction commits after its statement read the clock).
			if p < op.Call-b.skew {
				return out
			}
			p = max(p, start)
			if !s.free(b, p) && s.holder != "" {
				p = max(p, s.untilLo-b.skew)
			}
		}
		if p >= start-b.skew && p <= op.Return+b.skew && s.free(b, p) && g.Token > s.last &&
			near(g.Until-g.GrantedAt, int64(op.AtMostFor), round) && s.tickOK(b, op.Tick) {
			n := state{lo: max(start, p-b.skew), holder: op.Owner, token: g.Token, granted: p,
				untilLo: g.Until, untilHi: b.arrival(op, g.Until, g.GrantedAt), atLeast: g.AtLeastUntil, atLeastHi: g.AtLeastUntil, phase: held, last: g.Token, tick: s.tick}
			if g.AtLeastUntil != 0 {
				n.atLeastHi = b.arrival(op, g.AtLeastUntil, g.GrantedAt)
			}
			if op.Tick != 0 {
				n.tick = op.Tick
			}
			out = append(out, n)
		}
		return out
	case NotAcquired:
		if start <= op.Return && (s.refuses(b, op.Owner, start) || op.contended) {
			n := s
			n.lo = start
			return []state{n}
		}
		return nil
	case StaleTick:
		if s.tickStale(b, op.Tick) && start <= op.Return {
			n := s
			n.lo = start
			return []state{n}
		}
		return nil
	case Unknown:
		out := []state{s} // no effect
		// The grant, if any, happened at some instant g of [p, hi]: p is
		// the first instant from the call on at which the name was free,
		// hi the latest the request can have been delivered at. The
		// lease is then known to end in [p+most, hi+most]; grants by
		// others are judged against the former, refusals the latter.
		p, hi := start, b.late(op, start)
		if !s.free(b, p) {
			p = max(p, s.untilLo-b.skew)
		}
		if p <= hi && s.free(b, p) && s.tickOK(b, op.Tick) {
			n := state{lo: p, holder: op.Owner, granted: p,
				untilLo: p + int64(op.AtMostFor), untilHi: hi + int64(op.AtMostFor) + b.skew,
				phase: held, last: s.last, tick: s.tick}
			if op.AtLeastFor > 0 {
				n.atLeast, n.atLeastHi = p+int64(op.AtLeastFor), hi+int64(op.AtLeastFor)
			}
			if op.Tick != 0 {
				n.tick = op.Tick
			}
			out = append(out, n)
		}
		return out
	}
	return nil
}

// extendOK applies a granted extension at the backend's instant p. The
// new minimum hold is what the backend reports or the contract sets, and
// must not lie earlier than the bound in force unless the extension ends
// the lease before that bound.
// extendOK is the extension op as the backend applied it at the instant
// at, judging the lease live at p (the same instant, unless the provider
// reports the client's clock, see extend).
func extendOK(b bounds, s state, op *Op, p, at int64) (state, bool) {
	g := op.Lease
	if s.holder != op.Owner || !s.live(b, p) || at < s.lo-b.skew {
		return s, false
	}
	if s.token != 0 && g.Token != s.token {
		return s, false
	}
	if s.token == 0 && g.Token <= s.last {
		return s, false
	}
	n := s
	if s.token == 0 {
		n.token, n.last, n.granted = g.Token, g.Token, g.GrantedAt
	}
	bound := g.AtLeastUntil
	if op.AtLeastFor > 0 {
		bound = max(bound, p+int64(op.AtLeastFor))
	}
	if s.atLeast != 0 && bound < s.atLeast-b.skew && g.Until >= s.atLeast {
		return s, false // the bound moved earlier
	}
	n.lo = max(s.lo, at-b.skew)
	n.untilLo, n.untilHi = g.Until, b.arrival(op, g.Until, p)
	n.atLeast, n.atLeastHi = max(bound, min(s.atLeast, g.Until)), max(bound, min(s.atLeastHi, g.Until))
	n.phase = held
	return n, true
}

func extend(b bounds, s state, op *Op, start int64) []state {
	switch op.Result {
	case OK:
		p := op.Lease.Until - int64(op.AtMostFor) // the backend's instant of the extension
		at := p
		if b.deferred {
			// p is the client's clock at the send (or the statement's),
			// against which the backend judges the lease live; the
			// backend applies the extension later, after the operation linearized before
			// (a stalled network delays it), the old lease standing
			// until then, even past the new Until.
			if p < op.Call-b.skew {
				return nil
			}
			at = max(p, start)
		}
		if at < start-b.skew-round || at > op.Return+b.skew+round {
			return nil
		}
		if n, ok := extendOK(b, s, op, p, at); ok {
			return []state{n}
		}
		return nil
	case NotHeld:
		out := notHeld(b, s, op, start)
		if b.resends && start <= op.Return {
			// An earlier send may have extended the lease, which then
			// ended before the send answered.
			if n, ok := extended(b, s, op, start, op.Return); ok {
				out = append(out, n)
			}
		}
		return out
	case Unknown:
		out := []state{s}
		if n, ok := extended(b, s, op, start, b.late(op, start)); ok {
			out = append(out, n)
		}
		return out
	}
	return nil
}

// extended is the state after an extension whose outcome the reply does
// not tell, applied at some instant from start to hi.
func extended(b bounds, s state, op *Op, start, hi int64) (state, bool) {
	if s.holder != op.Owner || !s.live(b, start) {
		return s, false
	}
	// Delivered late, it still acts only on a live lease.
	hi = min(hi, s.untilHi+b.skew)
	n := s
	n.lo = start
	n.untilLo, n.untilHi = min(s.untilLo, start+int64(op.AtMostFor)), max(s.untilHi, hi+int64(op.AtMostFor)+b.skew)
	if op.AtLeastFor > 0 {
		n.atLeast, n.atLeastHi = max(s.atLeast, start+int64(op.AtLeastFor)), max(s.atLeastHi, hi+int64(op.AtLeastFor))
	}
	return n, true
}

// notHeld judges an ErrNotHeld from Extend or Release: the owner did not
// hold the name, or its lease had ended, at some instant of the call.
func notHeld(b bounds, s state, op *Op, start int64) []state {
	if start > op.Return {
		return nil
	}
	n := s
	switch {
	case s.holder != op.Owner || s.phase != held:
		n.lo = start
	case op.Return >= s.untilLo-b.skew:
		n.lo = max(start, s.untilLo-b.skew)
	default:
		return nil
	}
	return []state{n}
}

func release(b bounds, s state, op *Op, start int64) []state {
	switch op.Result {
	case OK:
		if s.holder != op.Owner || !s.live(b, start) || start > op.Return {
			return nil
		}
		n := s
		n.lo = start
		n.phase = released
		// The release took effect somewhere in [start, Return].
		n.untilLo = min(s.untilLo, max(start, s.atLeast))
		n.untilHi = min(s.untilHi, max(op.Return, s.atLeastHi))
		return []state{n}
	case NotHeld:
		out := notHeld(b, s, op, start)
		if b.resends && s.holder == op.Owner && s.phase == held && s.live(b, start) && start <= op.Return {
			// An earlier send may have released it; the later one
			// found it gone.
			n := s
			n.lo = start
			n.phase = released
			n.untilLo = min(s.untilLo, max(start, s.atLeast))
			n.untilHi = min(s.untilHi, max(op.Return, s.atLeastHi))
			out = append(out, n)
		}
		return out
	case Unknown:
		out := []state{s}
		if s.holder == op.Owner && s.live(b, start) {
			n := s
			n.lo = start
			n.phase = released
			n.untilLo = min(s.untilLo, max(start, s.atLeast))
			out = append(out, n)
		}
		return out
	}
	return nil
}

func forceRelease(b bounds, s state, op *Op, start int64) []state {
	switch op.Result {
	case OK:
		if s.holder == "" || start > op.Return || start >= s.untilHi+b.linger+b.skew {
			return nil
		}
		if op.Cond != 0 && s.token != 0 && op.Cond != s.token {
			return nil
		}
		if s.token != 0 && op.Lease.Token != s.token {
			return nil
		}
		n := s
		n.lo = start
		n.phase = ended
		n.untilLo, n.untilHi = start, min(s.untilHi, op.Return)
		if s.token == 0 {
			if op.Lease.Token <= s.last {
				return nil
			}
			n.token, n.last = op.Lease.Token, op.Lease.Token
		}
		return []state{n}
	case NotHeld:
		if start > op.Return {
			return nil
		}
		n := s
		n.lo = start
		if s.holder != "" && (op.Cond == 0 || op.Cond == s.token) && op.Return < s.untilLo-b.skew && s.phase == held {
			return nil // the lease was in force throughout
		}
		return []state{n}
	case Unknown:
		out := []state{s}
		if s.holder != "" && (op.Cond == 0 || s.token == 0 || op.Cond == s.token) {
			n := s
			n.lo = start
			n.phase = ended
			n.untilLo = min(s.untilLo, start)
			out = append(out, n)
		}
		return out
	}
	return nil
}

var seed = maphash.MakeSeed()

// model is the porcupine model of one history's leases, partitioned by name.
func model(b bounds) porcupine.Model {
	nm := porcupine.NondeterministicModel{
		Partition: func(history []porcupine.Operation) [][]porcupine.Operation {
			by := map[string][]porcupine.Operation{}
			var names []string
			for _, o := range history {
				n := o.Input.(*Op).Name
				if _, ok := by[n]; !ok {
					names = append(names, n)
				}
				by[n] = append(by[n], o)
			}
			out := make([][]porcupine.Operation, 0, len(names))
			for _, n := range names {
				out = append(out, by[n])
			}
			return out
		},
		Init: func() []any { return []any{state{tick: noTick}} },
		Step: func(st, in, _ any) []any {
			next := step(b, st.(state), in.(*Op))
			out := make([]any, len(next))
			for i, n := range next {
				out[i] = n
			}
			return out
		},
		Equal: func(a, b any) bool { return a.(state) == b.(state) },
		Hash: func(st any) uint64 {
			s := st.(state)
			var h maphash.Hash
			h.SetSeed(seed)
			fmt.Fprint(&h, s.lo, s.holder, s.token, s.untilLo, s.untilHi, s.atLeast, s.atLeastHi, s.phase, s.last, s.tick)
			return h.Sum64()
		},
		DescribeOperation: func(in, _ any) string { return describe(in.(*Op)) },
		DescribeState:     func(st any) string { return describeState(st.(state)) },
	}
	return nm.ToModel()
}

func describeState(s state) string {
	if s.holder == "" {
		return fmt.Sprintf("free (last token %d; at %s)", s.last, ms(s.lo))
	}
	bound := ms(s.atLeast)
	if s.atLeastHi != s.atLeast {
		bound += ".." + ms(s.atLeastHi)
	}
	return fmt.Sprintf("%s token %d granted %s until %s..%s bound %s (%s, last token %d; at %s)",
		short(s.holder), s.token, ms(s.granted), ms(s.untilLo), ms(s.untilHi), bound, s.phase, s.last, ms(s.lo))
}

func (p phase) String() string {
	switch p {
	case held:
		return "held"
	case released:
		return "released in bound"
	case ended:
		return "force-released"
	}
	return "?"
}

func short(owner string) string {
	if len(owner) > 8 {
		return owner[:8]
	}
	return owner
}

// ms formats an instant of the history's axis.
func ms(t int64) string {
	return fmt.Sprintf("%.3fms", float64(t)/1e6)
}

func describe(o *Op) string {
	s := fmt.Sprintf("c%d %s %s", o.Client, o.Kind, short(o.Owner))
	if o.Process != 0 {
		s = fmt.Sprintf("p%d/", o.Process) + s
	}
	switch o.Kind {
	case Acquire, Extend:
		s += fmt.Sprintf(" most %v least %v", o.AtMostFor, o.AtLeastFor)
		if o.Tick != 0 {
			s += fmt.Sprintf(" tick %d", o.Tick)
		}
	case ForceRelease:
		if o.Cond != 0 {
			s += fmt.Sprintf(" if token %d", o.Cond)
		}
	}
	s += " → " + o.Result.String()
	if o.Result == OK && (o.Kind == Acquire || o.Kind == Extend) {
		g := o.Lease
		s += fmt.Sprintf(" token %d granted %s until %s", g.Token, ms(g.GrantedAt), ms(g.Until))
		if g.AtLeastUntil != 0 {
			s += " bound " + ms(g.AtLeastUntil)
		}
	}
	if o.Result == OK && o.Kind == ForceRelease {
		s += fmt.Sprintf(" freed token %d", o.Lease.Token)
	}
	if o.Result == OK && o.Kind == Inspect {
		if o.Held {
			s += fmt.Sprintf(" held, token %d", o.Lease.Token)
		} else {
			s += " free"
		}
	}
	if o.Err != "" {
		s += " (" + o.Err + ")"
	}
	return s
}
