package redlock

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/baton-go/baton/batontype"
	"github.com/baton-go/baton/internal/backenderr/rediserr"
	"github.com/baton-go/baton/internal/check"
	"github.com/baton-go/baton/internal/clock"
	"github.com/baton-go/baton/internal/defaults"
	"github.com/baton-go/baton/internal/keyspace"
	"github.com/baton-go/baton/lockprovider"
)

// Defaults of Config.
const (
	DefaultPrefix      = "baton:redlock:"
	DefaultDriftFactor = 0.01
	DefaultDriftMin    = 2 * time.Millisecond
	DefaultTimeout     = time.Second
	DefaultRecordTTL   = 30 * 24 * time.Hour
)

// MaxPrefixLen bounds Config.Prefix.
const MaxPrefixLen = keyspace.MaxPrefixLen

// Config configures a Provider. The zero value (or a nil *Config) means the
// defaults documented on each field.
type Config struct {
	// Prefix starts every key and channel the provider uses on every
	// master. Default DefaultPrefix ("baton:redlock:"). Printable text
	// without '{' or '}'.
	Prefix string

	// DriftFactor and DriftMin make up the clock drift allowance
	// AtMostFor*DriftFactor + DriftMin subtracted from a lease's validity:
	// the masters' clocks may run at slightly different rates from the
	// client's. Defaults DefaultDriftFactor (0.01) and DefaultDriftMin
	// (2 ms); zero means the default.
	DriftFactor float64
	DriftMin    time.Duration

	// Timeout bounds each master's call when the caller's context (and a
	// share of the lease) allows longer, and each background release of a
	// failed acquire. A round does not wait for a minority that does not
	// answer; a round that cannot settle without it (too few answered,
	// or contenders split the masters) waits at most this much. Default
	// DefaultTimeout (1 s).
	Timeout time.Duration

	// RecordTTL is the lifetime of each master's fencing counter and
	// newest-tick key, as in the single-Redis provider: set when created,
	// and an expired counter restarts from server time. Default
	// DefaultRecordTTL (30 days); at least one hour.
	RecordTTL time.Duration

	// Logger receives failures of the release subscriptions. Nil discards.
	Logger *slog.Logger
}

// Provider is a lockprovider.Provider over N independent Redis masters. It
// also implements lockprovider.ReleaseNotifier. It is safe for concurrent
// use. It does not own the clients and never closes them.
type Provider struct {
	masters      []*goredis.Client
	quorum       int
	prefix       string
	driftFactor  float64
	driftMin     time.Duration
	timeout      time.Duration
	recordTTL    int64 // ms
	recordTTLArg any   // recordTTL as a script argument, boxed once
	log          *slog.Logger

	acquire *goredis.Script
	commit  *goredis.Script
	extend  *goredis.Script
	release *goredis.Script

	allIdx []int     // every master's index; read-only
	rounds sync.Pool // of *round

	// Rounds whose calls still run after they completed, see track.
	orderMu   sync.Mutex
	inflight  map[nameOwner][]*round
	nInflight atomic.Int32 // the rounds in inflight

	notify notifier
}

var (
	_ lockprovider.Provider        = (*Provider)(nil)
	_ lockprovider.ReleaseNotifier = (*Provider)(nil)
)

var (
	//go:embed acquire.lua
	acquireSrc string
	//go:embed commit.lua
	commitSrc string
	//go:embed extend.lua
	extendSrc string
	//go:embed release.lua
	releaseSrc string
)

// New returns a provider over masters, independent Redis servers (not
// replicas of each other, not a Cluster). A grant needs a majority of them.
// Use an odd number, at least three, for fault tolerance. A nil cfg means
// the defaults. It makes no network call.
func New(masters []*goredis.Client, cfg *Config) (*Provider, error) {
	if len(masters) == 0 {
		return nil, &batontype.ValidationError{Pkg: "redlock", Field: "masters", Value: "[]", Reason: "must not be empty", Err: batontype.ErrInvalid}
	}
	for i, m := range masters {
		if m == nil {
			return nil, &batontype.ValidationError{Pkg: "redlock", Field: "masters", Value: "[" + strconv.Itoa(i) + "]", Reason: "is nil", Err: batontype.ErrInvalid}
		}
	}
	c := defaults.Of(cfg)
	var err error
	if c.Prefix, err = keyspace.Prefix(c.Prefix, DefaultPrefix, true); err != nil {
		return nil, err
	}
	switch {
	case c.DriftFactor == 0:
		c.DriftFactor = DefaultDriftFactor
	case c.DriftFactor < 0 || c.DriftFactor >= 0.5:
		return nil, &batontype.ValidationError{Pkg: "redlock", Field: "DriftFactor", Value: strconv.FormatFloat(c.DriftFactor, 'g', -1, 64),
			Reason: "must be in [0, 0.5)", Err: batontype.ErrInvalid}
	}
	if c.DriftMin, err = defaults.Duration("DriftMin", c.DriftMin, DefaultDriftMin, 0, 0, "must not be negative"); err != nil {
		return nil, err
	}
	if c.Timeout, err = defaults.Duration("Timeout", c.Timeout, DefaultTimeout, time.Millisecond, 0, "must be at least 1ms"); err != nil {
		return nil, err
	}
	if c.RecordTTL, err = defaults.RecordTTL(c.RecordTTL, DefaultRecordTTL); err != nil {
		return nil, err
	}
	c.Logger = defaults.Logger(c.Logger)
	p := &Provider{
		masters:     append([]*goredis.Client(nil), masters...),
		quorum:      len(masters)/2 + 1,
		prefix:      c.Prefix,
		driftFactor: c.DriftFactor,
		driftMin:    c.DriftMin,
		timeout:     c.Timeout,
		recordTTL:   c.RecordTTL.Milliseconds(),
		log:         c.Logger,
		acquire:     goredis.NewScript(acquireSrc),
		commit:      goredis.NewScript(commitSrc),
		extend:      goredis.NewScript(extendSrc),
		release:     goredis.NewScript(releaseSrc),
	}
	p.recordTTLArg = p.recordTTL
	p.allIdx = make([]int, len(masters))
	for i := range p.allIdx {
		p.allIdx[i] = i
	}
	p.allIdx = p.allIdx[:len(masters):len(masters)]
	p.rounds.New = func() any { return newRound(p) }
	p.notify.init(p)
	return p, nil
}

// Quorum is the number of masters a grant needs: a majority.
func (p *Provider) Quorum() int { return p.quorum }

// keys returns the lease key P{N} (also N's release channel), the fencing
// counter P{N}:f and the newest tick P{N}:t, with '%' and '}' in N escaped.
func (p *Provider) keys(name string) []string {
	lease := keyspace.Tagged(p.prefix, name, "")
	return []string{lease, lease + ":f", lease + ":t"}
}

// drift is the allowance for the masters' clocks running at other rates
// than the client's during a lease of d.
func (p *Provider) drift(d time.Duration) time.Duration {
	return time.Duration(float64(d)*p.driftFactor) + p.driftMin
}

// failure summarises the errors of a round that fell short of a majority:
// the caller's context error when it ended, else an
// *batontype.UnavailableError (NotSent when no request can have reached
// a master that could have changed the outcome). silent is the number of
// masters asked that had not answered when the round completed.
func failure(ctx context.Context, what string, replies []reply, silent int, why string) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("redlock: %s: %w", what, err)
	}
	var errs []error
	notSent := silent == 0
	for _, r := range replies {
		if r.err != nil {
			errs = append(errs, r.err)
			if !rediserr.NotSent(r.err) {
				notSent = false
			}
		}
	}
	if silent > 0 {
		errs = append(errs, fmt.Errorf("%d of %d masters did not answer in time", silent, len(replies)))
	}
	if len(errs) == 0 {
		return fmt.Errorf("redlock: %s: %w", what, &batontype.UnavailableError{Err: errors.New(why)})
	}
	return fmt.Errorf("redlock: %s: %w", what, &batontype.UnavailableError{NotSent: notSent, Err: fmt.Errorf("%s: %w", why, errors.Join(errs...))})
}

// unanswered lists the masters of idx (all when nil) without an answer.
func (p *Provider) unanswered(replies []reply, idx []int) []int {
	if idx == nil {
		idx = p.allIdx
	}
	var out []int
	for _, i := range idx {
		if !replies[i].ended {
			out = append(out, i)
		}
	}
	return out
}

// settled decides a round whose success needs q masters to report yes,
// and whose definite refusal needs more than N-q to report no: it is
// settled when one of them is reached, or when the masters still pending
// can reach neither (too few answered: unavailable).
func (p *Provider) settled(yes, no, pending int) bool {
	n := len(p.masters)
	return yes >= p.quorum || no > n-p.quorum || (yes+pending < p.quorum && no+pending <= n-p.quorum)
}

// value fields after the owner: token atLeastAt granted until atLeastUntil
// tick call, then LockedBy; call identifies the Acquire call that wrote or
// committed the value (see undo).
type state struct {
	token, granted, until, atLeastUntil, tick int64
}

func parseValue(owner, v string) (state, bool) {
	rest, ok := strings.CutPrefix(v, owner+"\n")
	if !ok {
		return state{}, false
	}
	nums, _, _ := strings.Cut(rest, "\n")
	f := strings.Fields(nums)
	if len(f) < 6 { // the seventh is the writing call's id
		return state{}, false
	}
	var n [6]int64
	for i, s := range f[:6] {
		x, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return state{}, false
		}
		n[i] = x
	}
	return state{token: n[0], granted: n[2], until: n[3], atLeastUntil: n[4], tick: n[5]}, true
}

func (s state) lease(name, owner string) batontype.Lease {
	l := batontype.Lease{
		Name: name, Owner: owner, Token: s.token,
		GrantedAt: time.UnixMilli(s.granted), Until: time.UnixMilli(s.until), AtLeastUntil: time.UnixMilli(s.atLeastUntil),
	}
	if s.tick != 0 {
		l.Tick = time.UnixMilli(s.tick)
	}
	return l
}

// Acquire implements lockprovider.Provider in two parallel rounds. The
// first takes the lease on every master where the name is free and reads
// each one's fencing counter; with a majority, the token is the largest
// counter plus one, and the second round writes it to the masters that
// granted. The grant counts only when a majority recorded the token within
// the lease's validity, AtMostFor minus the time spent minus the drift
// allowance; otherwise it is released on every master and Acquire fails
// with an error matching batontype.ErrUnavailable.
//
// When contenders split the masters so that nobody holds a majority, each
// releases what it took and tries again after a short random pause, for up
// to Config.Timeout; ErrNotAcquired means another owner held a majority, or
// the split did not resolve in that time.
func (p *Provider) Acquire(ctx context.Context, ap lockprovider.AcquireParams) (batontype.Lease, error) {
	if err := check.Args(ctx, ap.Validate()); err != nil {
		return batontype.Lease{}, err
	}
	if err := ctx.Err(); err != nil {
		return batontype.Lease{}, fmt.Errorf("redlock: acquire: %w", err)
	}
	start := time.Now()
	giveUp := start.Add(p.timeout)
	var idBuf [4]uint64
	ids := idBuf[:0] // of the attempts, see undo
	for attempt := 1; ; attempt++ {
		t0 := time.Now()
		ids = append(ids, rand.Uint64()>>1)
		l, sp, first, undone, err := p.tryAcquire(ctx, ap, start, ids)
		if sp == noSplit {
			return l, err
		}
		// The next attempt must not find this one's leases on masters that
		// answered: a release racing it there would fail its commit.
		if !wait(ctx, giveUp, undone) {
			first.done()
			if err := ctx.Err(); err != nil {
				return batontype.Lease{}, fmt.Errorf("redlock: acquire: %w", err)
			}
			return batontype.Lease{}, batontype.ErrNotAcquired
		}
		// The contender that holds the most masters (ties: the smaller
		// owner token) keeps them and asks again soon; the others let go
		// and wait a few attempts' time, so the split resolves instead of
		// recurring.
		took := max(time.Since(t0), 100*time.Microsecond)
		pause := took + time.Duration(rand.Int64N(int64(attempt)*int64(2*took)))
		if sp == splitKeep {
			pause = time.Duration(rand.Int64N(int64(took) / 2))
		} else {
			start = time.Time{}
		}
		if time.Now().Add(pause).After(giveUp) || !clock.Sleep(ctx, pause) {
			if sp == splitKeep {
				p.undo(ctx, ap.Name, ap.Owner, ids, p.allIdx, first)
			}
			first.done()
			if err := ctx.Err(); err != nil {
				return batontype.Lease{}, fmt.Errorf("redlock: acquire: %w", err)
			}
			return batontype.Lease{}, batontype.ErrNotAcquired
		}
		first.done()
		if start.IsZero() {
			start = time.Now()
		}
	}
}

// wait waits until done is closed (nil: at once), ctx is done or giveUp
// passed; it reports whether done was closed in time.
func wait(ctx context.Context, giveUp time.Time, done <-chan struct{}) bool {
	if done == nil {
		return true
	}
	t := time.NewTimer(time.Until(giveUp))
	defer t.Stop()
	select {
	case <-done:
		return true
	case <-ctx.Done():
		return false
	case <-t.C:
		return false
	}
}

// Outcomes of an attempt that found the masters split between contenders.
type split int

const (
	noSplit   split = iota
	splitKeep       // keep what was taken and ask again
	splitDrop       // what was taken has been released
)

// tryAcquire makes one attempt, whose leases count from start (an earlier
// attempt's, when it kept what it took). sp says whether contenders divided
// the masters so that nobody holds a majority; first is the attempt's
// first round when sp is not noSplit (for undo; the caller calls its done),
// and undone is closed when the clean-up of a failed attempt is done on
// the masters that had answered (see undo). ids are the ids of the
// Acquire call's attempts, this one's last.
func (p *Provider) tryAcquire(ctx context.Context, ap lockprovider.AcquireParams, start time.Time, ids []uint64) (
	_ batontype.Lease, sp split, first *round, undone <-chan struct{}, err error) {
	granted := start.UnixMilli()
	st := state{granted: granted, until: granted + ap.AtMostFor.Milliseconds(), atLeastUntil: granted + ap.AtLeastFor.Milliseconds()}
	if !ap.Tick.IsZero() {
		st.tick = ap.Tick.UnixMilli()
	}
	// A lease no longer than the drift allowance has no validity to check
	// against: it is taken for long enough to finish both rounds, then
	// set to AtMostFor by the second (tests use such leases; baton's
	// Locker refuses them, its safety margin being the same allowance).
	checkValidity := ap.AtMostFor > p.drift(ap.AtMostFor)
	// The first round's calls may take half the lease's validity, so
	// that the second round has time too; the validity is decided after
	// the second round.
	deadline, px, commitPX := start.Add((ap.AtMostFor-p.drift(ap.AtMostFor))/2), ap.AtMostFor.Milliseconds(), int64(0)
	if !checkValidity {
		deadline = start.Add(p.timeout)
		px, commitPX = px+p.timeout.Milliseconds(), px
	}
	keys := p.keys(ap.Name)
	id := ids[len(ids)-1]
	// The value's rest in one buffer, one allocation on the hot path.
	rest := make([]byte, 0, 128)
	for _, n := range [...]int64{st.granted, st.until, st.atLeastUntil, st.tick} {
		rest = append(strconv.AppendInt(rest, n, 10), ' ')
	}
	rest = append(strconv.AppendUint(rest, id, 10), '\n')
	rest = append(rest, ap.LockedBy...)
	args := []any{ap.Owner, string(rest), px, ap.AtLeastFor.Milliseconds(), st.tick, p.recordTTLArg}

	replies, r1 := p.round(ctx, deadline, nil, p.acquire, keys, args, settleAcquire, nameOwner{ap.Name, ap.Owner})
	defer func() {
		if sp == noSplit {
			r1.done()
		}
	}()
	// setFrom is the earliest instant the caller's lease keys can have been
	// set: the first request of this attempt that took a master, or start
	// for masters taken by an earlier attempt. Every key lives at least
	// AtMostFor from it, so the grant is timed from it rather than from
	// start, which can be earlier by the time the requests waited to be
	// sent.
	setFrom := time.Now().Add(time.Hour)
	var granting []int          // masters where the caller holds the lease now
	var counter int64           // largest counter seen
	var same *state             // the grant the caller already holds
	agree := 0                  // masters holding that grant
	holders := map[string]int{} // other owners and their masters
	stale := 0                  // masters refusing the tick
	var unknown []int           // masters that did not answer: a late request may still take the lease there
	for i, r := range replies {
		if !r.ended || r.err != nil {
			unknown = append(unknown, i)
			continue
		}
		v, ok := r.v.([]any)
		if !ok {
			if n, isInt := r.v.(int64); isInt && n == -1 {
				stale++
			}
			continue
		}
		if len(v) < 2 {
			continue
		}
		switch kind, _ := keyspace.Int(v[0]); kind {
		case 0:
			holders[fmt.Sprint(v[1])]++
		case 1: // already the caller's
			granting = append(granting, i)
			setFrom = start
			if len(v) > 2 {
				if c, ok := keyspace.Int(v[2]); ok && c > counter {
					counter = c
				}
			}
			s, ok := parseValue(ap.Owner, fmt.Sprint(v[1]))
			if !ok {
				continue
			}
			if s.token > counter {
				counter = s.token
			}
			if s.token != 0 && (same == nil || s.token == same.token) {
				same = &s
				agree++
			}
		case 2:
			granting = append(granting, i)
			if r.sent.Before(setFrom) {
				setFrom = r.sent
			}
			if c, ok := keyspace.Int(v[1]); ok && c > counter {
				counter = c
			}
		}
	}
	if len(granting) < p.quorum {
		held, majority, top := 0, false, len(granting) > 0
		for owner, n := range holders {
			held += n
			majority = majority || n >= p.quorum
			top = top && (n < len(granting) || (n == len(granting) && owner > ap.Owner))
		}
		switch {
		case held+stale+len(granting) < p.quorum:
			// Masters without an answer make the outcome unknown only
			// when they could have completed a majority.
			silent := len(p.unanswered(replies, nil))
			if len(granting)+silent < p.quorum {
				silent = 0
			}
			err = failure(ctx, "acquire", replies, silent, "too few masters answered")
		case stale > 0:
			err = batontype.ErrStaleTick
		case majority:
			err = batontype.ErrNotAcquired
		case top:
			return batontype.Lease{}, splitKeep, r1, nil, batontype.ErrNotAcquired
		default:
			sp = splitDrop
			err = batontype.ErrNotAcquired
		}
		undone = p.undo(ctx, ap.Name, ap.Owner, ids, append(granting, unknown...), r1)
		return batontype.Lease{}, sp, r1, undone, err
	}
	if same != nil && agree >= p.quorum {
		// A repeat by the holder: the same grant. Masters where the lease
		// had lapsed and was taken again keep an uncommitted copy that
		// Release and expiry remove.
		return same.lease(ap.Name, ap.Owner), noSplit, nil, nil, nil
	}
	firstStart := start // when masters kept from earlier attempts were taken
	if setFrom.After(start) {
		granted = setFrom.UnixMilli()
		st.granted, st.until, st.atLeastUntil = granted, granted+ap.AtMostFor.Milliseconds(), granted+ap.AtLeastFor.Milliseconds()
		start = time.UnixMilli(granted) // whole ms, not after setFrom
	}
	if checkValidity {
		// The keys live at least AtMostFor from start; the second round
		// may use what is left of it, the validity is decided after it.
		deadline = start.Add(ap.AtMostFor)
	}

	st.token = counter + 1
	firstReplies := replies
	replies, second := p.round(ctx, deadline, granting, p.commit, keys,
		[]any{ap.Owner, st.token, st.tick, p.recordTTLArg, commitPX, st.granted, st.until, st.atLeastUntil, id}, settleCommit, nameOwner{ap.Name, ap.Owner})
	second.done() // nothing to wait for: a failed commit is undone from the first round
	// Each committed master's key lives at least until the later of two
	// bounds: AtMostFor after the request that set it was sent, and its
	// remaining TTL, as the commit read it, after the commit was sent. The
	// grant is valid while a majority of keys live: until the q-th latest
	// of those bounds, less the drift allowance.
	var ends []time.Time
	for i, r := range replies {
		if !committed(r) {
			continue
		}
		v := r.v.([]any)
		setAt := firstStart
		if kind, _ := keyspace.Int(firstReplies[i].v.([]any)[0]); kind == 2 {
			setAt = firstReplies[i].sent
		}
		end := setAt.Add(ap.AtMostFor)
		if ms, ok := keyspace.Int(v[1]); ok {
			if e := r.sent.Add(time.Duration(ms) * time.Millisecond); e.After(end) {
				end = e
			}
		}
		ends = append(ends, end)
	}
	if len(ends) < p.quorum {
		undone = p.undo(ctx, ap.Name, ap.Owner, ids, append(granting, unknown...), r1)
		return batontype.Lease{}, noSplit, nil, undone, failure(ctx, "acquire: commit token", replies, len(p.unanswered(replies, granting)),
			"the lease lapsed on a majority before the token was recorded")
	}
	if checkValidity {
		slices.SortFunc(ends, func(a, b time.Time) int { return b.Compare(a) })
		if validEnd := ends[p.quorum-1].Add(-p.drift(ap.AtMostFor)); !time.Now().Before(validEnd) {
			undone = p.undo(ctx, ap.Name, ap.Owner, ids, append(granting, unknown...), r1)
			return batontype.Lease{}, noSplit, nil, undone, p.late("acquire", start, validEnd.Sub(start))
		}
	}
	return st.lease(ap.Name, ap.Owner), noSplit, nil, nil, nil
}

// firstSettled decides the first round of an acquire: a majority took the
// lease, or it cannot and a majority answered (the refusal's kind is
// known) or cannot answer (unavailable). When the caller already holds a
// committed grant on a master (a repeat), a majority must agree on it, or
// every master answer, so that the repeat returns that grant rather than
// a new token: masters that granted after an earlier round completed hold
// uncommitted copies.
func (p *Provider) firstSettled(owner string, replies []reply, pending int) bool {
	granting, answered, agree := 0, 0, 0
	var token int64
	for _, r := range replies {
		if !r.ended || r.err != nil {
			continue
		}
		answered++
		v, ok := r.v.([]any)
		if !ok || len(v) < 2 {
			continue
		}
		switch kind, _ := keyspace.Int(v[0]); kind {
		case 1:
			granting++
			if s, ok := parseValue(owner, fmt.Sprint(v[1])); ok && s.token != 0 {
				if token == 0 {
					token = s.token
				}
				if s.token == token {
					agree++
				}
			}
		case 2:
			granting++
		}
	}
	if granting >= p.quorum {
		return token == 0 || agree >= p.quorum
	}
	return granting+pending < p.quorum && (answered >= p.quorum || answered+pending < p.quorum)
}

// committed reports whether r is a commit that recorded the token.
func committed(r reply) bool {
	v, ok := r.v.([]any)
	return r.ended && ok && len(v) == 2
}

func (p *Provider) late(what string, start time.Time, validity time.Duration) error {
	return fmt.Errorf("redlock: %s: %w", what, &batontype.UnavailableError{
		Err: fmt.Errorf("a majority did not answer within the lease's validity %v (took %v)", validity, time.Since(start))})
}

// undo deletes what the attempts ids of an Acquire call took when they
// are abandoned, best effort and in the background, on the masters listed:
// only values those attempts wrote or committed, so nothing a later
// attempt committed (a value it found and committed carries its own id).
// On each master the release is sent once that master's call in first,
// the attempt's first round (nil: none ran), has ended, since a request
// still in flight could take the lease after it: at once where it has,
// else by that call when it ends. Each release is bounded by
// Config.Timeout from when it is sent. The returned channel is closed
// when the releases sent at once are done. It ignores the at-least bound:
// the lease never counted.
func (p *Provider) undo(ctx context.Context, name, owner string, ids []uint64, idx []int, first *round) <-chan struct{} {
	c := &cleanup{p: p, ctx: context.WithoutCancel(ctx), keys: p.keys(name)[:1], args: []any{owner, 1}, idx: idx}
	for _, id := range ids {
		c.args = append(c.args, id)
	}
	now := idx
	if first != nil {
		now = nil
		first.mu.Lock()
		for _, i := range idx {
			if first.out[i].ended || !slices.Contains(first.idx, i) {
				now = append(now, i)
			}
		}
		first.cleanup = c
		first.mu.Unlock()
	}
	c.answered.Add(len(now))
	for _, i := range now {
		go func() {
			defer c.answered.Done()
			c.release(i)
		}()
	}
	undone := make(chan struct{})
	go func() {
		c.answered.Wait()
		close(undone)
	}()
	return undone
}

// Extend implements lockprovider.Provider: one parallel round to every
// master. It succeeds when a majority still held the lease and answered
// within the new lease's validity.
func (p *Provider) Extend(ctx context.Context, ep lockprovider.ExtendParams) (batontype.Lease, error) {
	if err := check.Args(ctx, ep.Validate()); err != nil {
		return batontype.Lease{}, err
	}
	if err := ctx.Err(); err != nil {
		return batontype.Lease{}, fmt.Errorf("redlock: extend: %w", err)
	}
	start := time.Now()
	now := start.UnixMilli()
	until, atLeast := now+ep.AtMostFor.Milliseconds(), now+ep.AtLeastFor.Milliseconds()
	validUntil := start.Add(ep.AtMostFor - p.drift(ep.AtMostFor))
	checkValidity := validUntil.After(start)
	deadline := validUntil
	if !checkValidity {
		deadline = start.Add(p.timeout)
	}
	keys := p.keys(ep.Name)[:1]
	replies, r := p.round(ctx, deadline, nil, p.extend, keys,
		[]any{ep.Owner, ep.AtMostFor.Milliseconds(), ep.AtLeastFor.Milliseconds(), until, atLeast}, settleExtend, nameOwner{ep.Name, ep.Owner})
	r.done()
	var best *state
	ok, refusedBy := 0, 0
	for _, r := range replies {
		switch v := r.v.(type) {
		case int64:
			refusedBy++
		case string:
			s, good := parseValue(ep.Owner, v)
			if !good {
				continue
			}
			ok++
			if best == nil || s.token > best.token {
				best = &s
			}
		}
	}
	switch {
	case ok >= p.quorum && best != nil && best.token != 0:
		if checkValidity && !time.Now().Before(validUntil) {
			return batontype.Lease{}, p.late("extend", start, validUntil.Sub(start))
		}
		return best.lease(ep.Name, ep.Owner), nil
	case refusedBy > len(p.masters)-p.quorum || (ok >= p.quorum && (best == nil || best.token == 0)):
		return batontype.Lease{}, batontype.ErrNotHeld
	default:
		return batontype.Lease{}, failure(ctx, "extend", replies, len(p.unanswered(replies, nil)), "too few masters answered")
	}
}

// Release implements lockprovider.Provider: one parallel round to every
// master. It returns ErrNotHeld when a majority did not hold the lease.
func (p *Provider) Release(ctx context.Context, rp lockprovider.ReleaseParams) error {
	if err := check.Args(ctx, rp.Validate()); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("redlock: release: %w", err)
	}
	keys := p.keys(rp.Name)[:1]
	replies, r := p.round(ctx, time.Now().Add(p.timeout), nil, p.release, keys, []any{rp.Owner, 0}, settleRelease, nameOwner{rp.Name, rp.Owner})
	r.done()
	ok, refusedBy := released(replies)
	switch {
	case ok >= p.quorum:
		return nil
	case refusedBy > len(p.masters)-p.quorum:
		return batontype.ErrNotHeld
	default:
		return failure(ctx, "release", replies, len(p.unanswered(replies, nil)), "too few masters answered")
	}
}

// extended counts the masters of an extend round that extended the
// lease and those that refused.
func extended(replies []reply) (ok, refusedBy int) {
	for _, r := range replies {
		switch r.v.(type) {
		case int64:
			refusedBy++
		case string:
			ok++
		}
	}
	return ok, refusedBy
}

// released counts the masters of a release round that released the lease
// and those that refused.
func released(replies []reply) (ok, refusedBy int) {
	for _, r := range replies {
		if n, isInt := r.v.(int64); isInt {
			if n == 1 {
				ok++
			} else {
				refusedBy++
			}
		}
	}
	return ok, refusedBy
}
