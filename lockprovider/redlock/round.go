package redlock

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	goredis "github.com/redis/go-redis/v9"
)

// reply is one master's answer in a round.
type reply struct {
	v     any
	err   error
	sent  time.Time // just before the request was handed to the client
	ended bool      // the call ended before the round completed
}

// A round runs one script on some masters in parallel. Every operation
// runs one or two, so a round costs the healthy path little: rounds are
// pooled per Provider with their reply slice, grace timer and call
// function, a call needs no closure of its own, and the calls themselves
// decide when the round is settled, so the caller is woken once (every
// call ended, or the grace after the settling answer passed) rather than
// per answer. A round goes back to the pool when both its caller (done)
// and every call, which may run on in the background, let go of it.
type round struct {
	p     *Provider
	grace *time.Timer   // stopped between uses
	wake  chan struct{} // capacity 1: every call ended while the caller waited
	call  func()        // r.run, bound once: starting a call allocates nothing

	// Set before the calls start, read-only while they run.
	ctx    context.Context // bounded by the round's bound, not by the caller's cancellation
	cancel context.CancelFunc
	script *goredis.Script
	keys   []string
	args   []any
	idx    []int // the masters asked
	how    settle
	no     nameOwner
	begin  time.Time
	after  []*round // earlier rounds of the same name and owner still running, see track

	next atomic.Int32 // the calls take their masters from idx in turn
	refs atomic.Int32 // calls running, plus one until the caller is done

	mu      sync.Mutex
	endedC  sync.Cond  // on mu, signalled when a call ends
	out     []reply    // under mu: the replies so far, indexed like p.masters
	running int        // under mu: calls not ended
	graced  bool       // under mu: settled, r.grace runs
	closed  bool       // under mu: the caller took the replies
	order   *nameOwner // under mu: the round is in p.inflight under this key
	cleanup *cleanup   // under mu: set when the attempt was abandoned, see Provider.undo
}

func newRound(p *Provider) *round {
	r := &round{p: p, grace: time.NewTimer(time.Hour), wake: make(chan struct{}, 1), out: make([]reply, len(p.masters))}
	r.grace.Stop()
	r.call = r.run
	r.endedC.L = &r.mu
	return r
}

// run is one master's call.
func (r *round) run() {
	i := r.idx[r.next.Add(1)-1]
	for _, e := range r.after {
		e.wait(i)
	}
	sent := time.Now()
	v, err := r.script.Run(r.ctx, r.p.masters[i], r.keys, r.args...).Result()
	r.mu.Lock()
	r.out[i] = reply{v: v, err: err, sent: sent, ended: true}
	r.running--
	if !r.closed {
		if r.running == 0 {
			r.wake <- struct{}{}
		} else {
			r.settle()
		}
	}
	c := r.cleanup
	var untrack *nameOwner
	if r.running == 0 {
		untrack, r.order = r.order, nil
	}
	r.endedC.Broadcast()
	r.mu.Unlock()
	if c != nil {
		// The attempt was abandoned while this call ran: its clean-up on
		// this master waited for it (see undo).
		c.release(i)
	}
	if untrack != nil {
		r.p.untrack(*untrack, r)
	}
	r.unref()
}

// settle starts the grace timer once the replies settle the round: the
// others get as long again as that took, so that a healthy minority is
// not left behind (a release still arriving there would look like a split
// to the next acquire), but a silent one costs at most that. r.mu is held.
func (r *round) settle() {
	if !r.graced && r.p.settledBy(r.how, r.no.owner, r.out, r.running) {
		r.graced = true
		r.grace.Reset(time.Since(r.begin))
	}
}

// wait waits until r's call on master i, if any, has ended.
func (r *round) wait(i int) {
	if !slices.Contains(r.idx, i) {
		return
	}
	r.mu.Lock()
	for !r.out[i].ended {
		r.endedC.Wait()
	}
	r.mu.Unlock()
}

// done lets go of the caller's hold on r (nil: no round ran).
func (r *round) done() {
	if r != nil {
		r.unref()
	}
}

func (r *round) unref() {
	if r.refs.Add(-1) != 0 {
		return
	}
	r.cancel()
	select {
	case <-r.wake: // the last call ended as the caller stopped waiting
	default:
	}
	for _, e := range r.after {
		e.unref()
	}
	clear(r.out)
	r.graced, r.closed = false, false
	r.ctx, r.cancel, r.script, r.keys, r.args, r.idx, r.after, r.cleanup = nil, nil, nil, nil, nil, nil, nil, nil
	r.no = nameOwner{}
	r.p.rounds.Put(r)
}

// Ways a round is settled, see Provider.settledBy.
type settle int8

const (
	settleAcquire settle = iota // Acquire's first round, see firstSettled
	settleCommit                // Acquire's second round
	settleExtend
	settleRelease
)

// round runs script on the masters listed in idx (all when nil) in
// parallel and returns their replies indexed like p.masters once the
// replies so far settle the outcome (see settledBy) and the others had as
// long again as that took to answer; or when every call ended, the
// round's bound passed or ctx is done. The bound is deadline,
// Config.Timeout from now or ctx's deadline, whichever comes first. Each
// call is bounded by it too, but not by ctx's cancellation: the calls of
// masters that had not answered (their replies are not ended) continue in
// the background until they end or the bound passes. The caller never
// waits for them, and calls done on the round it returns (nil when no
// call was made) once it no longer needs it.
func (p *Provider) round(ctx context.Context, deadline time.Time, idx []int, script *goredis.Script, keys []string, args []any,
	how settle, no nameOwner) ([]reply, *round) {
	if d := time.Now().Add(p.timeout); d.Before(deadline) {
		deadline = d
	}
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	if idx == nil {
		idx = p.allIdx
	}
	out := make([]reply, len(p.masters))
	if len(idx) == 0 || ctx.Err() != nil {
		return out, nil
	}
	r := p.rounds.Get().(*round)
	r.begin = time.Now()
	r.ctx, r.cancel = context.WithDeadline(context.WithoutCancel(ctx), deadline)
	r.script, r.keys, r.args, r.idx, r.how, r.no = script, keys, args, idx, how, no
	r.after = p.inflightFor(no)
	r.running = len(idx)
	r.settle()
	r.next.Store(0)
	r.refs.Store(int32(len(idx)) + 1)
	for range idx {
		go r.call()
	}
	// r.ctx's deadline is the round's own timer: a client that ignores
	// context deadlines does not hold the caller past the bound.
	select {
	case <-r.wake:
	case <-r.grace.C:
	case <-ctx.Done():
	case <-r.ctx.Done():
	}
	r.mu.Lock()
	r.closed = true
	copy(out, r.out)
	if r.running > 0 {
		p.track(r)
	}
	r.mu.Unlock()
	r.grace.Stop()
	return out, r
}

// nameOwner identifies the operations of one owner on one name.
type nameOwner struct{ name, owner string }

// Through one Provider, the calls of an owner's operations on a name reach
// each master in the order of the operations, even when a round completed
// before every call was sent: a Release still on its way to a master must
// not delete the lease a later Acquire by the same owner takes there (a
// caller may reuse an owner token; the Locker does not), nor an Acquire
// still on its way take a lease after a later Release. So a round that
// completes with calls still running is tracked in p.inflight until they
// end, and each call of a later round of the same name and owner waits for
// the tracked calls on its master before it is sent. The healthy path pays
// an atomic load per round.

// track puts r in p.inflight while its calls still run. r.mu is held.
func (p *Provider) track(r *round) {
	r.order = &r.no
	r.refs.Add(1) // p.inflight's hold, let go in untrack
	p.orderMu.Lock()
	if p.inflight == nil {
		p.inflight = make(map[nameOwner][]*round)
	}
	p.inflight[r.no] = append(p.inflight[r.no], r)
	p.nInflight.Add(1)
	p.orderMu.Unlock()
}

// untrack removes r from p.inflight once its last call ended.
func (p *Provider) untrack(no nameOwner, r *round) {
	p.orderMu.Lock()
	rs := slices.DeleteFunc(p.inflight[no], func(e *round) bool { return e == r })
	if len(rs) == 0 {
		delete(p.inflight, no)
	} else {
		p.inflight[no] = rs
	}
	p.nInflight.Add(-1)
	p.orderMu.Unlock()
	r.unref()
}

// inflightFor returns the tracked rounds of no, held for the caller (they
// are let go when its round is recycled).
func (p *Provider) inflightFor(no nameOwner) []*round {
	if p.nInflight.Load() == 0 {
		return nil
	}
	p.orderMu.Lock()
	defer p.orderMu.Unlock()
	rs := slices.Clone(p.inflight[no])
	for _, e := range rs {
		e.refs.Add(1)
	}
	return rs
}

// settledBy reports whether replies, with pending calls still running,
// settle a round of the kind how.
func (p *Provider) settledBy(how settle, owner string, replies []reply, pending int) bool {
	switch how {
	case settleAcquire:
		return p.firstSettled(owner, replies, pending)
	case settleCommit:
		n := 0
		for _, r := range replies {
			if committed(r) {
				n++
			}
		}
		return n >= p.quorum || n+pending < p.quorum
	case settleExtend:
		ok, refusedBy := extended(replies)
		return p.settled(ok, refusedBy, pending)
	default:
		ok, refusedBy := released(replies)
		return p.settled(ok, refusedBy, pending)
	}
}

// cleanup is the background release of an abandoned attempt's leases.
type cleanup struct {
	p        *Provider
	ctx      context.Context
	keys     []string
	args     []any
	idx      []int // the masters to release on
	answered sync.WaitGroup
}

// release deletes the attempt's value on master i, if listed, bounded by
// Config.Timeout.
func (c *cleanup) release(i int) {
	if !slices.Contains(c.idx, i) {
		return
	}
	ctx, cancel := context.WithTimeout(c.ctx, c.p.timeout)
	defer cancel()
	_, _ = c.p.release.Run(ctx, c.p.masters[i], c.keys, c.args...).Result()
}
