package lockprovidertest

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/baton-go/baton/batontype"

	"github.com/baton-go/baton/lockprovider"
)

// adminCases check lockprovider.Admin, and lockprovider.RateLister when
// the provider implements it.
func adminCases() []testCase {
	return []testCase{
		{"ForceRelease", testForceRelease},
		{"ForceReleaseWakesWaiters", testForceReleaseWakes},
		{"ForceReleaseNothingHeld", testForceReleaseNothing},
		{"MinHoldReported", testMinHoldReported},
		{"Ping", testPing},
		{"ResetRate", testResetRate},
		{"NilContext", testAdminNilContext},
	}
}

// ledgerCases check lockprovider.Ledger, retention included.
func ledgerCases() []testCase {
	return []testCase{
		{"OpenAndComplete", testLedgerOpenComplete},
		{"RetriedAcquireOneRecord", testLedgerRetry},
		{"RefusalsRecordNothing", testLedgerRefusals},
		{"LostLeaseStillRecorded", testLedgerLost},
		{"ForceReleaseRecorded", testLedgerForceRelease},
		{"QueryRangeAndOrder", testLedgerQuery},
		{"Retention", testLedgerRetention},
		{"Validation", testLedgerValidation},
		{"NilContext", testLedgerNilContext},
	}
}

// registryCases check lockprovider.Registry.
func registryCases() []testCase {
	return []testCase{
		{"RegisterAndList", testRegistryList},
		{"Expiry", testRegistryExpiry},
		{"HeartbeatAndDeregister", testRegistryHeartbeat},
		{"Validation", testRegistryValidation},
		{"NilContext", testRegistryNilContext},
	}
}

// departureCases check lockprovider.Departures.
func departureCases() []testCase {
	return []testCase{{"LeftAndGone", testDepartures}}
}

// A deregistered instance is departed and left, a lapsed one departed and
// gone, each with its last heartbeat and jobs; registering again makes it
// live, no longer departed.
func testDepartures(e *env) {
	r := e.p.(lockprovider.Registry)
	d := e.p.(lockprovider.Departures)
	departed := func() map[string]batontype.Departed {
		e.t.Helper()
		ds, err := d.Departed(e.ctx)
		if err != nil {
			e.t.Fatalf("Departed: %v", err)
		}
		out := map[string]batontype.Departed{}
		for _, x := range ds {
			out[x.LockedBy] = x
		}
		return out
	}
	for _, i := range []batontype.Instance{instance("stays", "j"), instance("leaves", "j"), instance("dies", "j", "k")} {
		ttl := time.Minute
		if i.LockedBy == "dies" {
			ttl = time.Second
		}
		if err := r.Register(e.ctx, i, ttl); err != nil {
			e.t.Fatalf("Register(%s): %v", i.LockedBy, err)
		}
	}
	if ds := departed(); len(ds) != 0 {
		e.t.Fatalf("Departed before any departure: %+v", ds)
	}
	before := time.Now()
	if err := r.Deregister(e.ctx, "leaves"); err != nil {
		e.t.Fatalf("Deregister: %v", err)
	}
	time.Sleep(1100 * time.Millisecond) // the 1 s TTL of "dies" passes: its lapse is what is checked
	ds := departed()
	left, gone := ds["leaves"], ds["dies"]
	if len(ds) != 2 || !left.Left || gone.Left || ds["stays"].LockedBy != "" {
		e.t.Fatalf("Departed = %+v, want leaves (left) and dies (gone)", ds)
	}
	if len(gone.Jobs) != 2 || gone.Jobs[1].Name != "k" || !gone.Until.After(gone.Heartbeat) || !nearTime(gone.Until, gone.Heartbeat.Add(time.Second), inspectTol) {
		e.t.Errorf("gone entry %+v: want its jobs, last heartbeat and the lapse a TTL later", gone)
	}
	if !nearTime(left.Until, before, 2*time.Second) {
		e.t.Errorf("left entry departed at %v, want about %v (the Deregister)", left.Until, before)
	}
	if is := e.instances(); len(is) != 1 || is[0].LockedBy != "stays" {
		e.t.Errorf("Instances = %+v, want only stays", is)
	}
	e.wantErr(r.Heartbeat(e.ctx, "leaves", time.Minute), batontype.ErrNotRegistered, "Heartbeat of a departed instance")
	// A write by another instance keeps the departed (within retention).
	if err := r.Heartbeat(e.ctx, "stays", time.Minute); err != nil {
		e.t.Fatalf("Heartbeat: %v", err)
	}
	if err := r.Register(e.ctx, instance("stays", "j"), time.Minute); err != nil {
		e.t.Fatalf("Register: %v", err)
	}
	if ds := departed(); len(ds) != 2 {
		e.t.Errorf("after others' writes: %+v, want both departed still", ds)
	}
	// Restarted under the same name: live again.
	if err := r.Register(e.ctx, instance("dies", "j"), time.Minute); err != nil {
		e.t.Fatalf("Register again: %v", err)
	}
	if ds := departed(); len(ds) != 1 || !ds["leaves"].Left {
		e.t.Errorf("after dies registered again: %+v, want only leaves", ds)
	}
	if is := e.instances(); len(is) != 2 {
		e.t.Errorf("Instances = %+v, want dies and stays", is)
	}
}

// A forced release frees a lease inside its at-least bound, reports the
// holder, makes the next token larger and leaves the old owner unable to
// extend or release.
func testForceRelease(e *env) {
	a := e.p.(lockprovider.Admin)
	name, owner := e.name(), lockprovider.NewOwner()
	l, err := e.p.Acquire(e.ctx, lockprovider.AcquireParams{Name: name, Owner: owner, LockedBy: "old-holder", AtMostFor: long, AtLeastFor: long})
	if err != nil {
		e.t.Fatalf("Acquire: %v", err)
	}
	_, err = a.ForceRelease(e.ctx, lockprovider.ForceReleaseParams{Name: name, Token: l.Token + 1})
	e.wantErr(err, batontype.ErrNotHeld, "ForceRelease with another lease's token")
	e.wantHeld(name, "after a ForceRelease for another token")
	info, err := a.ForceRelease(e.ctx, lockprovider.ForceReleaseParams{Name: name, Token: l.Token, By: "lockprovidertest"})
	if err != nil {
		e.t.Fatalf("ForceRelease: %v", err)
	}
	if info.Name != name || info.LockedBy != "old-holder" || info.Token != l.Token || !info.Held {
		e.t.Errorf("ForceRelease reported %+v, want holder old-holder, token %d, held", info, l.Token)
	}
	if !nearTime(info.Until, l.Until, inspectTol) {
		e.t.Errorf("ForceRelease Until %v, want %v", info.Until, l.Until)
	}
	if !nearTime(info.AtLeastUntil, l.AtLeastUntil, inspectTol) {
		e.t.Errorf("ForceRelease AtLeastUntil %v, want %v", info.AtLeastUntil, l.AtLeastUntil)
	}
	_, err = e.extend(name, owner, long, 0)
	e.wantErr(err, batontype.ErrNotHeld, "old owner's Extend after ForceRelease")
	e.wantErr(e.release(name, owner), batontype.ErrNotHeld, "old owner's Release after ForceRelease")
	next := e.mustAcquire(name, lockprovider.NewOwner(), long, 0)
	if next.Token <= l.Token {
		e.t.Errorf("token after ForceRelease %d, want > %d", next.Token, l.Token)
	}
}

// An Admin provider's Inspector reports each lease's minimum hold
// (LeaseInfo.AtLeastUntil), so that an operator sees how long a lease
// stays held after its holder releases it: the grant's bound while held,
// through an extension, and after a release inside it; zero for a lease
// without one.
func testMinHoldReported(e *env) {
	in, ok := e.p.(lockprovider.Inspector)
	if !ok {
		e.t.Fatalf("provider %T implements lockprovider.Admin but not lockprovider.Inspector", e.p)
	}
	name, owner := e.name(), lockprovider.NewOwner()
	l, err := e.p.Acquire(e.ctx, lockprovider.AcquireParams{Name: name, Owner: owner, AtMostFor: 2 * long, AtLeastFor: long})
	if err != nil {
		e.t.Fatalf("Acquire: %v", err)
	}
	if !nearTime(l.AtLeastUntil, l.GrantedAt.Add(long), inspectTol) {
		e.t.Fatalf("grant's AtLeastUntil %v, want its grant %v + %v", l.AtLeastUntil, l.GrantedAt, long)
	}
	check := func(what string, want time.Time) {
		e.t.Helper()
		info := e.inspect(in, name)
		if !nearTime(info.AtLeastUntil, want, inspectTol) {
			e.t.Errorf("%s: AtLeastUntil %v, want %v", what, info.AtLeastUntil, want)
		}
	}
	check("held", l.AtLeastUntil)
	x := e.mustExtend(name, owner, 3*long, long) // a new bound from the extension
	check("extended", x.AtLeastUntil)
	e.mustRelease(name, owner)
	e.wantHeld(name, "released inside its minimum hold")
	check("released inside its minimum hold", x.AtLeastUntil)

	plain, plainOwner := e.name(), lockprovider.NewOwner()
	e.mustAcquire(plain, plainOwner, long, 0)
	if info := e.inspect(in, plain); !info.AtLeastUntil.IsZero() {
		e.t.Errorf("lease without a minimum hold: AtLeastUntil %v, want zero", info.AtLeastUntil)
	}
	e.mustRelease(plain, plainOwner)
}

// Waiters registered for release notifications wake on a forced release.
func testForceReleaseWakes(e *env) {
	a := e.p.(lockprovider.Admin)
	rn, ok := e.p.(lockprovider.ReleaseNotifier)
	if !ok {
		e.t.Skip("provider does not implement lockprovider.ReleaseNotifier")
	}
	name := e.name()
	e.mustAcquire(name, lockprovider.NewOwner(), long, 0)
	ch := make(chan struct{}, 1)
	e.register(rn, name, ch)
	if _, err := a.ForceRelease(e.ctx, lockprovider.ForceReleaseParams{Name: name}); err != nil {
		e.t.Fatalf("ForceRelease: %v", err)
	}
	e.wantSignal(ch, "forced release")
}

// Nothing to free is ErrNotHeld; bad names are invalid.
func testForceReleaseNothing(e *env) {
	a := e.p.(lockprovider.Admin)
	name := e.name()
	_, err := a.ForceRelease(e.ctx, lockprovider.ForceReleaseParams{Name: name})
	e.wantErr(err, batontype.ErrNotHeld, "ForceRelease of a name never acquired")
	e.cycle(name)
	_, err = a.ForceRelease(e.ctx, lockprovider.ForceReleaseParams{Name: name})
	e.wantErr(err, batontype.ErrNotHeld, "ForceRelease of a released name")
	_, err = a.ForceRelease(e.ctx, lockprovider.ForceReleaseParams{})
	e.wantErr(err, batontype.ErrInvalid, "ForceRelease of an empty name")
	e.mustAcquire(name, lockprovider.NewOwner(), long, 0)
	for _, bad := range []lockprovider.ForceReleaseParams{
		{Name: name, Token: -1},
		{Name: name, By: "op\nerator"},
		{Name: name, By: strings.Repeat("x", batontype.MaxLockedByLen+1)},
	} {
		_, err = a.ForceRelease(e.ctx, bad)
		e.wantErr(err, batontype.ErrInvalid, fmt.Sprintf("ForceRelease(%+v)", bad))
	}
	e.wantHeld(name, "after ForceRelease with invalid arguments")
}

func testPing(e *env) {
	if err := e.p.(lockprovider.Admin).Ping(e.ctx); err != nil {
		e.t.Errorf("Ping: %v", err)
	}
}

// ResetRate gives a key its full capacity back; a RateLister lists the
// key while it has state and not after the reset.
func testResetRate(e *env) {
	a := e.p.(lockprovider.Admin)
	rl, ok := e.p.(lockprovider.RateLimiter)
	if !ok {
		if err := a.ResetRate(e.ctx, e.name()); err != nil {
			e.t.Errorf("ResetRate without rate limiting: %v", err)
		}
		return
	}
	key := e.name()
	req := lockprovider.RateRequest{Key: key, N: 2, Limits: []batontype.RateLimit{
		{Algorithm: batontype.FixedWindow, Rate: 2, Period: time.Hour},
		{Algorithm: batontype.GCRA, Rate: 2, Period: time.Hour},
	}}
	take := func(what string, want bool) {
		e.t.Helper()
		res, err := rl.RateLimit(e.ctx, req)
		if err != nil {
			e.t.Fatalf("%s: RateLimit: %v", what, err)
		}
		if res.Allowed != want {
			e.t.Fatalf("%s: Allowed %v, want %v", what, res.Allowed, want)
		}
	}
	take("first", true)
	take("over the limit", false)
	if ls, ok := e.p.(lockprovider.RateLister); ok {
		infos, err := ls.ListRates(e.ctx)
		if err != nil {
			e.t.Fatalf("ListRates: %v", err)
		}
		var got []string
		for _, i := range infos {
			if i.Key == key {
				got = append(got, i.Algorithm.String()+"/"+i.Period.String())
				if d := time.Until(i.ResetAt); d <= 0 || d > time.Hour+time.Minute {
					e.t.Errorf("ListRates %s: ResetAt %v from now, want within the hour", i.Algorithm, d)
				}
			}
		}
		slices.Sort(got)
		if strings.Join(got, ",") != "fixed_window/1h0m0s,gcra/1h0m0s" {
			e.t.Errorf("ListRates for the key: %v, want fixed_window/1h0m0s and gcra/1h0m0s", got)
		}
	}
	if err := a.ResetRate(e.ctx, key); err != nil {
		e.t.Fatalf("ResetRate: %v", err)
	}
	take("after reset", true)
	if err := a.ResetRate(e.ctx, e.name()); err != nil {
		e.t.Errorf("ResetRate of a key without state: %v", err)
	}
	e.wantErr(a.ResetRate(e.ctx, ""), batontype.ErrInvalid, "ResetRate of an empty key")
}

// ledger helpers

func (e *env) acquireRun(name, owner, lockedBy string, atMostFor time.Duration, tick time.Time, rs lockprovider.RunStart) (batontype.Lease, error) {
	l, err := e.p.(lockprovider.Ledger).AcquireRun(e.ctx, lockprovider.AcquireParams{
		Name: name, Owner: owner, LockedBy: lockedBy, AtMostFor: atMostFor, Tick: tick,
	}, rs)
	e.slow(err, atMostFor, "AcquireRun")
	return l, err
}

func (e *env) releaseRun(l batontype.Lease, lockedBy string, out batontype.Outcome, msg string, r batontype.Retention) error {
	return e.releaseRunFlags(l, lockedBy, lockprovider.RunStart{}, out, msg, r)
}

// releaseRunFlags is releaseRun for a run opened with the flags of rs.
func (e *env) releaseRunFlags(l batontype.Lease, lockedBy string, rs lockprovider.RunStart, out batontype.Outcome, msg string, r batontype.Retention) error {
	return e.p.(lockprovider.Ledger).ReleaseRun(e.ctx, lockprovider.ReleaseParams{Name: l.Name, Owner: l.Owner}, lockprovider.RunEnd{
		Run: batontype.RunRecord{Job: l.Name, Token: l.Token, Tick: l.Tick, LockedBy: lockedBy, Started: l.GrantedAt,
			CatchUp: rs.CatchUp, Manual: rs.Manual},
		Outcome: out, Error: msg, Retention: r,
	})
}

func (e *env) runs(job string, q batontype.RunQuery) []batontype.RunRecord {
	e.t.Helper()
	q.Job = job
	rs, err := e.p.(lockprovider.Ledger).Runs(e.ctx, q)
	if err != nil {
		e.t.Fatalf("Runs(%+v): %v", q, err)
	}
	return rs
}

func (e *env) lastRuns(job string) (last, success batontype.RunRecord) {
	e.t.Helper()
	last, success, err := e.p.(lockprovider.Ledger).LastRuns(e.ctx, job)
	if err != nil {
		e.t.Fatalf("LastRuns(%q): %v", job, err)
	}
	return last, success
}

// A claimed tick opens a started record; its release completes it.
func testLedgerOpenComplete(e *env) {
	name, owner := e.name(), lockprovider.NewOwner()
	tick := baseTick.Add(time.Minute)
	l, err := e.acquireRun(name, owner, "replica-1", long, tick, lockprovider.RunStart{CatchUp: true})
	if err != nil {
		e.t.Fatalf("AcquireRun: %v", err)
	}
	last, succ := e.lastRuns(name)
	if last.Token != l.Token || last.Job != name || !last.Tick.Equal(tick) || last.LockedBy != "replica-1" ||
		!last.CatchUp || last.Manual || last.Outcome != batontype.OutcomeRunning || !last.Finished.IsZero() {
		e.t.Errorf("open run = %+v, want job %q token %d tick %v replica-1 catch-up running", last, name, l.Token, tick)
	}
	if !nearTime(last.Started, l.GrantedAt, inspectTol) {
		e.t.Errorf("open run Started %v, want the grant %v", last.Started, l.GrantedAt)
	}
	if succ.Token != 0 {
		e.t.Errorf("last success before any success = %+v, want none", succ)
	}
	if err := e.releaseRunFlags(l, "replica-1", lockprovider.RunStart{CatchUp: true}, batontype.OutcomeSucceeded, "", batontype.Retention{}); err != nil {
		e.t.Fatalf("ReleaseRun: %v", err)
	}
	e.wantFree(name, "after ReleaseRun")
	last, succ = e.lastRuns(name)
	if last.Token != l.Token || last.Outcome != batontype.OutcomeSucceeded || last.Finished.Before(last.Started) ||
		last.Finished.IsZero() || !last.CatchUp || !last.Tick.Equal(tick) || last.LockedBy != "replica-1" {
		e.t.Errorf("completed run = %+v, want token %d succeeded, finished after started", last, l.Token)
	}
	if succ.Token != l.Token {
		e.t.Errorf("last success token %d, want %d", succ.Token, l.Token)
	}
	// A failed run with a long error text: the newest run, not a success.
	l2, err := e.acquireRun(name, lockprovider.NewOwner(), "replica-2", long, tick.Add(time.Minute), lockprovider.RunStart{Manual: true})
	if err != nil {
		e.t.Fatalf("second AcquireRun: %v", err)
	}
	long := strings.Repeat("é", batontype.MaxRunError)
	// The caller measured the run: it finished at its start + Elapsed.
	const took = 1234 * time.Millisecond
	err = e.p.(lockprovider.Ledger).ReleaseRun(e.ctx, lockprovider.ReleaseParams{Name: name, Owner: l2.Owner}, lockprovider.RunEnd{
		Run:     batontype.RunRecord{Job: name, Token: l2.Token, Tick: l2.Tick, LockedBy: "replica-2", Started: l2.GrantedAt, Manual: true},
		Outcome: batontype.OutcomeFailed, Error: long, Elapsed: took,
	})
	if err != nil {
		e.t.Fatalf("second ReleaseRun: %v", err)
	}
	last, succ = e.lastRuns(name)
	if last.Token != l2.Token || last.Outcome != batontype.OutcomeFailed || !last.Manual || last.CatchUp {
		e.t.Errorf("second run = %+v, want token %d failed manual", last, l2.Token)
	}
	if last.Duration() != took {
		e.t.Errorf("second run lasted %v (started %v, finished %v), want Elapsed %v", last.Duration(), last.Started, last.Finished, took)
	}
	if last.Error != batontype.CutError(long) || len(last.Error) > batontype.MaxRunError {
		e.t.Errorf("stored error is %d bytes, want the text cut to %d", len(last.Error), batontype.MaxRunError)
	}
	if succ.Token != l.Token {
		e.t.Errorf("last success after a failure: token %d, want %d", succ.Token, l.Token)
	}
	// A panicked run: its error (with newlines) and its stack, longer
	// than stored, come back apart; Runs returns the stack too.
	l3, err := e.acquireRun(name, lockprovider.NewOwner(), "replica-3", time.Hour, tick.Add(2*time.Minute), lockprovider.RunStart{})
	if err != nil {
		e.t.Fatalf("third AcquireRun: %v", err)
	}
	const panicText = "scheduler: job panicked: boom\nsecond line"
	stack := "goroutine 7 [running]:\n" + strings.Repeat("main.job(...)\n\t/src/job.go:12 +0x1d\n", batontype.MaxRunStack/32)
	err = e.p.(lockprovider.Ledger).ReleaseRun(e.ctx, lockprovider.ReleaseParams{Name: name, Owner: l3.Owner}, lockprovider.RunEnd{
		Run:     batontype.RunRecord{Job: name, Token: l3.Token, Tick: l3.Tick, LockedBy: "replica-3", Started: l3.GrantedAt},
		Outcome: batontype.OutcomePanicked, Error: panicText, Stack: stack, Elapsed: took,
	})
	if err != nil {
		e.t.Fatalf("third ReleaseRun: %v", err)
	}
	last, _ = e.lastRuns(name)
	runs, err := e.p.(lockprovider.Ledger).Runs(e.ctx, batontype.RunQuery{Job: name, Limit: 1})
	if err != nil || len(runs) != 1 {
		e.t.Fatalf("Runs after a panicked run: %v %v", runs, err)
	}
	for _, r := range []batontype.RunRecord{last, runs[0]} {
		if r.Token != l3.Token || r.Outcome != batontype.OutcomePanicked || r.Error != panicText || r.Stack != batontype.CutStack(stack) ||
			len(r.Stack) > batontype.MaxRunStack || !strings.HasPrefix(r.Stack, "goroutine 7 [running]:\n") {
			e.t.Errorf("panicked run: token %d (want %d), outcome %s, error %q, stack of %d bytes (want %d, cut from %d)",
				r.Token, l3.Token, r.Outcome, r.Error, len(r.Stack), len(batontype.CutStack(stack)), len(stack))
		}
	}
	if last.LockedBy != "replica-3" || runs[0].Manual || runs[0].CatchUp {
		e.t.Errorf("panicked run's record: %+v", runs[0])
	}
}

// An acquire retried by the same owner opens no second record.
func testLedgerRetry(e *env) {
	name, owner := e.name(), lockprovider.NewOwner()
	tick := baseTick.Add(2 * time.Minute)
	l1, err := e.acquireRun(name, owner, "r", long, tick, lockprovider.RunStart{})
	if err != nil {
		e.t.Fatalf("AcquireRun: %v", err)
	}
	l2, err := e.acquireRun(name, owner, "r", long, tick, lockprovider.RunStart{})
	if err != nil || l2.Token != l1.Token {
		e.t.Fatalf("retried AcquireRun: %v, token %d, want the same grant %d", err, l2.Token, l1.Token)
	}
	if rs := e.runs(name, batontype.RunQuery{}); len(rs) != 1 {
		e.t.Errorf("runs after a retried acquire: %d, want 1: %+v", len(rs), rs)
	}
}

// Refused claims (held, stale tick) leave no record.
func testLedgerRefusals(e *env) {
	name := e.name()
	tick := baseTick.Add(3 * time.Minute)
	l, err := e.acquireRun(name, lockprovider.NewOwner(), "a", long, tick, lockprovider.RunStart{})
	if err != nil {
		e.t.Fatalf("AcquireRun: %v", err)
	}
	_, err = e.acquireRun(name, lockprovider.NewOwner(), "b", long, tick.Add(time.Second), lockprovider.RunStart{})
	e.wantErr(err, batontype.ErrNotAcquired, "AcquireRun while held")
	if err := e.releaseRun(l, "a", batontype.OutcomeSucceeded, "", batontype.Retention{}); err != nil {
		e.t.Fatalf("ReleaseRun: %v", err)
	}
	_, err = e.acquireRun(name, lockprovider.NewOwner(), "c", long, tick, lockprovider.RunStart{})
	e.wantErr(err, batontype.ErrStaleTick, "AcquireRun of a tick already run")
	rs := e.runs(name, batontype.RunQuery{})
	if len(rs) != 1 || rs[0].LockedBy != "a" {
		e.t.Errorf("runs = %+v, want only the run of a", rs)
	}
}

// A run whose lease lapsed gets its outcome although the release is
// refused.
func testLedgerLost(e *env) {
	name := e.name()
	l, err := e.acquireRun(name, lockprovider.NewOwner(), "slow", e.short(50*time.Millisecond), baseTick.Add(4*time.Minute), lockprovider.RunStart{})
	if err != nil {
		e.t.Fatalf("AcquireRun: %v", err)
	}
	sleepPast(time.Now(), e.short(50*time.Millisecond))
	err = e.releaseRun(l, "slow", batontype.OutcomeLockLost, "lock lost", batontype.Retention{})
	e.wantErr(err, batontype.ErrNotHeld, "ReleaseRun after expiry")
	last, _ := e.lastRuns(name)
	if last.Token != l.Token || last.Outcome != batontype.OutcomeLockLost || last.Error != "lock lost" || last.Finished.IsZero() {
		e.t.Errorf("lost run = %+v, want token %d lock_lost, finished", last, l.Token)
	}
}

// A forced release of a run's lease marks that run, and only it, with
// who released it and when (by the backend's clock, between the freed
// grant and the next); the old holder's later end keeps the mark. A
// plain lock's forced release makes no run. Needs lockprovider.Admin.
func testLedgerForceRelease(e *env) {
	a, ok := e.p.(lockprovider.Admin)
	if !ok {
		e.t.Skip("provider does not implement lockprovider.Admin")
	}
	name := e.name()
	tick := baseTick.Add(5 * time.Minute)
	prev, err := e.acquireRun(name, lockprovider.NewOwner(), "holder", long, tick, lockprovider.RunStart{})
	if err != nil {
		e.t.Fatalf("AcquireRun: %v", err)
	}
	if err := e.releaseRun(prev, "holder", batontype.OutcomeSucceeded, "", batontype.Retention{}); err != nil {
		e.t.Fatalf("ReleaseRun: %v", err)
	}
	l, err := e.acquireRun(name, lockprovider.NewOwner(), "holder", long, tick.Add(time.Minute), lockprovider.RunStart{})
	if err != nil {
		e.t.Fatalf("second AcquireRun: %v", err)
	}
	const by = "cli:operator@host"
	// Token 0: the provider finds the freed lease's run itself.
	if _, err := a.ForceRelease(e.ctx, lockprovider.ForceReleaseParams{Name: name, By: by}); err != nil {
		e.t.Fatalf("ForceRelease: %v", err)
	}
	next := e.mustAcquire(name, lockprovider.NewOwner(), long, 0) // a plain grant: a later backend time
	e.mustRelease(name, next.Owner)
	check := func(what string, wantOutcome batontype.Outcome) {
		e.t.Helper()
		runs := e.runs(name, batontype.RunQuery{})
		if len(runs) != 2 || runs[0].Token != l.Token || runs[1].Token != prev.Token {
			e.t.Fatalf("%s: runs %+v, want tokens %d and %d", what, runs, l.Token, prev.Token)
		}
		r := runs[0]
		if r.ReleasedBy != by || r.Outcome != wantOutcome {
			e.t.Errorf("%s: freed run = %+v, want ReleasedBy %q, outcome %q", what, r, by, wantOutcome)
		}
		if r.ReleasedAt.Before(l.GrantedAt.Add(-inspectTol)) || r.ReleasedAt.After(next.GrantedAt.Add(inspectTol)) {
			e.t.Errorf("%s: ReleasedAt %v, want between the freed grant %v and the next %v", what, r.ReleasedAt, l.GrantedAt, next.GrantedAt)
		}
		if o := runs[1]; o.ReleasedBy != "" || !o.ReleasedAt.IsZero() {
			e.t.Errorf("%s: the run before = %+v, want no release mark", what, o)
		}
		if last, _ := e.lastRuns(name); last.ReleasedBy != by || !last.ReleasedAt.Equal(r.ReleasedAt) {
			e.t.Errorf("%s: LastRuns = %+v, want the mark of Runs", what, last)
		}
	}
	check("before the holder's end", batontype.OutcomeRunning)
	err = e.releaseRun(l, "holder", batontype.OutcomeLockLost, "lock lost", batontype.Retention{})
	e.wantErr(err, batontype.ErrNotHeld, "the old holder's ReleaseRun after ForceRelease")
	check("after the holder's end", batontype.OutcomeLockLost)

	plain := e.name()
	e.mustAcquire(plain, lockprovider.NewOwner(), long, 0)
	if _, err := a.ForceRelease(e.ctx, lockprovider.ForceReleaseParams{Name: plain, By: by}); err != nil {
		e.t.Fatalf("ForceRelease of a plain lock: %v", err)
	}
	if runs := e.runs(plain, batontype.RunQuery{}); len(runs) != 0 {
		e.t.Errorf("runs of a plain lock after its forced release: %+v, want none", runs)
	}
}

// Runs are listed newest first, bounded by Limit and the time range.
func testLedgerQuery(e *env) {
	name := e.name()
	var leases []batontype.Lease
	for i := range 5 {
		l, err := e.acquireRun(name, lockprovider.NewOwner(), "q", long, baseTick.Add(time.Duration(i+1)*time.Hour), lockprovider.RunStart{})
		if err != nil {
			e.t.Fatalf("AcquireRun %d: %v", i, err)
		}
		if i < 4 { // the last stays running
			if err := e.releaseRun(l, "q", batontype.OutcomeSucceeded, "", batontype.Retention{}); err != nil {
				e.t.Fatalf("ReleaseRun %d: %v", i, err)
			}
		}
		leases = append(leases, l)
		time.Sleep(3 * time.Millisecond) // distinct grant milliseconds
	}
	all := e.runs(name, batontype.RunQuery{})
	if len(all) != 5 {
		e.t.Fatalf("Runs: %d records, want 5: %+v", len(all), all)
	}
	for i, r := range all {
		want := leases[4-i]
		if r.Token != want.Token {
			e.t.Errorf("Runs[%d].Token = %d, want %d (newest first)", i, r.Token, want.Token)
		}
	}
	if all[0].Outcome != batontype.OutcomeRunning || all[1].Outcome != batontype.OutcomeSucceeded {
		e.t.Errorf("outcomes %v, %v; want running, succeeded", all[0].Outcome, all[1].Outcome)
	}
	if rs := e.runs(name, batontype.RunQuery{Limit: 2}); len(rs) != 2 || rs[0].Token != leases[4].Token {
		e.t.Errorf("Runs(Limit 2) = %+v, want the 2 newest", rs)
	}
	since := all[2].Started // the third newest
	rs := e.runs(name, batontype.RunQuery{Since: since})
	if len(rs) != 3 {
		e.t.Errorf("Runs(Since third newest) = %d records, want 3", len(rs))
	}
	rs = e.runs(name, batontype.RunQuery{Until: since})
	if len(rs) != 2 || rs[0].Token != leases[1].Token {
		e.t.Errorf("Runs(Until third newest) = %+v, want the 2 oldest", rs)
	}
	if rs := e.runs(e.name(), batontype.RunQuery{}); len(rs) != 0 {
		e.t.Errorf("Runs of a job without runs = %+v", rs)
	}
}

// The ledger keeps the newest MaxRuns runs of a job, trimmed at least
// once in any RetentionSlack claims: never more than MaxRuns +
// RetentionSlack - 1, never fewer than the newest MaxRuns, and LastRuns'
// success is the newest success still held.
func testLedgerRetention(e *env) {
	name := e.name()
	ret := batontype.Retention{MaxRuns: 3}
	const claims = 3*batontype.RetentionSlack + 5
	var tokens []int64
	lastTrim := 0 // the claim after which the job last held at most MaxRuns
	for i := range claims {
		l, err := e.acquireRun(name, lockprovider.NewOwner(), "k", long, baseTick.Add(time.Duration(i+1)*time.Hour), lockprovider.RunStart{Retention: ret})
		if err != nil {
			e.t.Fatalf("AcquireRun %d: %v", i, err)
		}
		out := batontype.OutcomeFailed
		if i == 0 || i == 20 {
			out = batontype.OutcomeSucceeded
		}
		if err := e.releaseRun(l, "k", out, "", ret); err != nil {
			e.t.Fatalf("ReleaseRun %d: %v", i, err)
		}
		tokens = append(tokens, l.Token)
		rs := e.runs(name, batontype.RunQuery{Limit: batontype.MaxRuns})
		if len(rs) > ret.MaxRuns+batontype.RetentionSlack-1 {
			e.t.Fatalf("after %d claims the ledger holds %d runs, want at most %d", i+1, len(rs), ret.MaxRuns+batontype.RetentionSlack-1)
		}
		for k := range min(i+1, ret.MaxRuns) {
			if k >= len(rs) || rs[k].Token != tokens[i-k] {
				e.t.Fatalf("after %d claims the ledger holds %+v, want the newest %d runs first", i+1, rs, ret.MaxRuns)
			}
		}
		if len(rs) <= ret.MaxRuns {
			lastTrim = i + 1
		} else if i+1-lastTrim >= batontype.RetentionSlack {
			e.t.Fatalf("claims %d to %d trimmed nothing: the ledger holds %d runs", lastTrim+1, i+1, len(rs))
		}
		// The last success is the newest one still held.
		var want int64
		for _, r := range rs {
			if r.Outcome == batontype.OutcomeSucceeded {
				want = r.Token
				break
			}
		}
		if _, succ := e.lastRuns(name); succ.Token != want {
			e.t.Fatalf("after %d claims LastRuns' success is token %d, want %d (the newest success held)", i+1, succ.Token, want)
		}
	}

	// A run whose record was trimmed while it ran (its lease lapsed and
	// later claims pushed it out) is not recorded again by its release.
	gone := e.name()
	small := batontype.Retention{MaxRuns: 1}
	lost, err := e.acquireRun(gone, lockprovider.NewOwner(), "slow", e.short(50*time.Millisecond), baseTick.Add(time.Hour), lockprovider.RunStart{Retention: small})
	if err != nil {
		e.t.Fatalf("AcquireRun: %v", err)
	}
	sleepPast(time.Now(), e.short(50*time.Millisecond))
	for i := range batontype.RetentionSlack + 1 {
		l, err := e.acquireRun(gone, lockprovider.NewOwner(), "k", long, baseTick.Add(time.Duration(i+2)*time.Hour), lockprovider.RunStart{Retention: small})
		if err != nil {
			e.t.Fatalf("AcquireRun %d: %v", i, err)
		}
		if err := e.releaseRun(l, "k", batontype.OutcomeSucceeded, "", small); err != nil {
			e.t.Fatalf("ReleaseRun %d: %v", i, err)
		}
	}
	e.wantErr(e.releaseRun(lost, "slow", batontype.OutcomeLockLost, "lock lost", small), batontype.ErrNotHeld, "ReleaseRun of a lapsed lease")
	rs := e.runs(gone, batontype.RunQuery{})
	if len(rs) > small.MaxRuns+batontype.RetentionSlack-1 {
		e.t.Errorf("the ledger holds %d runs, want at most %d", len(rs), small.MaxRuns+batontype.RetentionSlack-1)
	}
	for _, r := range rs {
		if r.Token == lost.Token {
			e.t.Errorf("the release of a trimmed run recorded it again: %+v", r)
		}
	}

	// Age: runs that started more than MaxAge ago are gone within
	// RetentionSlack claims, and the claims younger than MaxAge stay. A
	// machine so slow that the claims took longer than MaxAge makes the
	// second check meaningless: it is then run again with a longer MaxAge.
	e.timed(time.Second, func(scale time.Duration) bool {
		maxAge := time.Second * scale
		aged := e.name()
		var old []int64
		for i := range 2 {
			l, err := e.acquireRun(aged, lockprovider.NewOwner(), "k", long, baseTick.Add(time.Duration(i+1)*time.Hour), lockprovider.RunStart{})
			if err != nil {
				e.t.Fatalf("AcquireRun: %v", err)
			}
			if err := e.releaseRun(l, "k", batontype.OutcomeSucceeded, "", batontype.Retention{}); err != nil {
				e.t.Fatalf("ReleaseRun: %v", err)
			}
			old = append(old, l.Token)
		}
		time.Sleep(maxAge + 100*time.Millisecond) // older than the MaxAge below
		ret := batontype.Retention{MaxAge: maxAge}
		var young []int64
		first := time.Now() // no young run started before
		for i := range batontype.RetentionSlack {
			l, err := e.acquireRun(aged, lockprovider.NewOwner(), "k", long, baseTick.Add(time.Duration(i+10)*time.Hour), lockprovider.RunStart{Retention: ret})
			if err != nil {
				e.t.Fatalf("AcquireRun: %v", err)
			}
			if err := e.releaseRun(l, "k", batontype.OutcomeSucceeded, "", ret); err != nil {
				e.t.Fatalf("ReleaseRun: %v", err)
			}
			young = append(young, l.Token)
		}
		if time.Since(first) >= maxAge-tol {
			return false // the first young runs may have aged past MaxAge by the last claims
		}
		rs := e.runs(aged, batontype.RunQuery{})
		var held []int64
		for _, r := range rs {
			held = append(held, r.Token)
		}
		for _, tk := range old {
			if slices.Contains(held, tk) {
				e.t.Errorf("%d claims after MaxAge passed the ledger still holds the aged run %d: %v", batontype.RetentionSlack, tk, held)
			}
		}
		for _, tk := range young {
			if !slices.Contains(held, tk) {
				e.t.Errorf("the ledger dropped run %d, younger than MaxAge: %v", tk, held)
			}
		}
		return true
	})
}

func testLedgerValidation(e *env) {
	lg := e.p.(lockprovider.Ledger)
	name := e.name()
	_, err := e.acquireRun(name, lockprovider.NewOwner(), "v", long, baseTick, lockprovider.RunStart{Retention: batontype.Retention{MaxRuns: -1}})
	e.wantErr(err, batontype.ErrInvalid, "AcquireRun with MaxRuns -1")
	_, err = e.acquireRun("", lockprovider.NewOwner(), "v", long, baseTick, lockprovider.RunStart{})
	e.wantErr(err, batontype.ErrInvalid, "AcquireRun with an empty name")
	l := batontype.Lease{Name: name, Owner: lockprovider.NewOwner(), Token: 1}
	e.wantErr(e.releaseRun(l, "v", "done", "", batontype.Retention{}), batontype.ErrInvalid, "ReleaseRun with an unknown outcome")
	err = lg.ReleaseRun(e.ctx, lockprovider.ReleaseParams{Name: name, Owner: l.Owner}, lockprovider.RunEnd{
		Run: batontype.RunRecord{Job: name, Token: 1}, Outcome: batontype.OutcomeSucceeded, Elapsed: -time.Second})
	e.wantErr(err, batontype.ErrInvalid, "ReleaseRun with a negative Elapsed")
	l.Token = 0
	e.wantErr(e.releaseRun(l, "v", batontype.OutcomeSucceeded, "", batontype.Retention{}), batontype.ErrInvalid, "ReleaseRun without a token")
	_, err = lg.Runs(e.ctx, batontype.RunQuery{Job: name, Limit: -1})
	e.wantErr(err, batontype.ErrInvalid, "Runs with Limit -1")
	_, _, err = lg.LastRuns(e.ctx, "")
	e.wantErr(err, batontype.ErrInvalid, "LastRuns of an empty name")
}

// registry

func instance(lockedBy string, jobs ...string) batontype.Instance {
	inst := batontype.Instance{LockedBy: lockedBy, Version: "v1.2.3", Started: time.Unix(1_700_000_000, 0).UTC()}
	for _, j := range jobs {
		inst.Jobs = append(inst.Jobs, batontype.JobSpec{
			Name: j, Schedule: "@every 1m0s", Locked: true, AtMostFor: time.Minute, AtLeastFor: time.Second,
			Options: []string{"auto_renew"},
		})
	}
	return inst
}

func (e *env) instances() []batontype.Instance {
	e.t.Helper()
	is, err := e.p.(lockprovider.Registry).Instances(e.ctx)
	if err != nil {
		e.t.Fatalf("Instances: %v", err)
	}
	return is
}

func testRegistryList(e *env) {
	r := e.p.(lockprovider.Registry)
	a, b := instance("host-b:2", "report", "sync"), instance("host-a:1", "report")
	b.Jobs[0].TimeZone = "Europe/Paris"
	b.Jobs[0].Schedule = "0 2 * * *"
	for _, i := range []batontype.Instance{a, b} {
		if err := r.Register(e.ctx, i, time.Minute); err != nil {
			e.t.Fatalf("Register(%s): %v", i.LockedBy, err)
		}
	}
	is := e.instances()
	if len(is) != 2 || is[0].LockedBy != "host-a:1" || is[1].LockedBy != "host-b:2" {
		e.t.Fatalf("Instances = %+v, want host-a:1 and host-b:2", is)
	}
	got := is[0]
	if got.Version != "v1.2.3" || !got.Started.Equal(b.Started) || !slices.EqualFunc(got.Jobs, b.Jobs, func(x, y batontype.JobSpec) bool {
		return x.Name == y.Name && x.Schedule == y.Schedule && x.TimeZone == y.TimeZone && x.Locked == y.Locked &&
			x.AtMostFor == y.AtMostFor && x.AtLeastFor == y.AtLeastFor && slices.Equal(x.Options, y.Options)
	}) {
		e.t.Errorf("instance read back as %+v, want %+v", got, b)
	}
	if d := got.Until.Sub(got.Heartbeat); !near(d, time.Minute, inspectTol) {
		e.t.Errorf("Until - Heartbeat = %v, want the TTL 1m", d)
	}
	if !nearTime(got.Heartbeat, time.Now(), 2*time.Second) {
		e.t.Errorf("Heartbeat %v, want about now", got.Heartbeat)
	}
	// Published skips come back as sent.
	sk := batontype.Skips{Held: 3, Paused: 1, Last: batontype.Skip{Tick: baseTick, Reason: batontype.SkipHeld, Holder: "host-b:2"}}
	a.Jobs[0].Skips = &sk
	if err := r.Register(e.ctx, a, time.Minute); err != nil {
		e.t.Fatalf("Register with skips: %v", err)
	}
	if is := e.instances(); len(is) != 2 || !sameSkips(is[1].Jobs[0].Skips, sk) {
		e.t.Errorf("skips read back as %+v, want %+v", is[1].Jobs[0].Skips, sk)
	}
	// Registering again replaces the jobs.
	a.Jobs = a.Jobs[:1]
	if err := r.Register(e.ctx, a, time.Minute); err != nil {
		e.t.Fatalf("Register again: %v", err)
	}
	if is := e.instances(); len(is) != 2 || len(is[1].Jobs) != 1 {
		e.t.Errorf("after re-registering: %+v, want host-b:2 with one job", is)
	}
}

// sameSkips reports whether got is want, its tick the same instant.
func sameSkips(got *batontype.Skips, want batontype.Skips) bool {
	if got == nil || !got.Last.Tick.Equal(want.Last.Tick) {
		return false
	}
	g := *got
	g.Last.Tick = want.Last.Tick
	return g == want
}

func testRegistryExpiry(e *env) {
	r := e.p.(lockprovider.Registry)
	if err := r.Register(e.ctx, instance("short", "j"), time.Second); err != nil {
		e.t.Fatalf("Register: %v", err)
	}
	if err := r.Register(e.ctx, instance("long", "j"), time.Minute); err != nil {
		e.t.Fatalf("Register: %v", err)
	}
	if n := len(e.instances()); n != 2 {
		e.t.Fatalf("Instances: %d, want 2", n)
	}
	time.Sleep(1100 * time.Millisecond) // the short entry's 1 s TTL passes: expiry is what is checked
	is := e.instances()
	if len(is) != 1 || is[0].LockedBy != "long" {
		e.t.Errorf("after the short TTL: %+v, want only long", is)
	}
	err := r.Heartbeat(e.ctx, "short", time.Minute)
	e.wantErr(err, batontype.ErrNotRegistered, "Heartbeat of an expired entry")
}

func testRegistryHeartbeat(e *env) {
	r := e.p.(lockprovider.Registry)
	if err := r.Register(e.ctx, instance("hb", "j"), time.Second); err != nil {
		e.t.Fatalf("Register: %v", err)
	}
	for range 3 {
		time.Sleep(400 * time.Millisecond) // three heartbeats span more than the 1 s TTL
		if err := r.Heartbeat(e.ctx, "hb", time.Second); err != nil {
			e.t.Fatalf("Heartbeat: %v", err)
		}
	}
	is := e.instances()
	if len(is) != 1 || len(is[0].Jobs) != 1 || is[0].Jobs[0].Name != "j" {
		e.t.Fatalf("after heartbeats past the first TTL: %+v, want hb with its job", is)
	}
	if err := r.Deregister(e.ctx, "hb"); err != nil {
		e.t.Fatalf("Deregister: %v", err)
	}
	if is := e.instances(); len(is) != 0 {
		e.t.Errorf("after Deregister: %+v", is)
	}
	if err := r.Deregister(e.ctx, "hb"); err != nil {
		e.t.Errorf("second Deregister: %v", err)
	}
	e.wantErr(r.Heartbeat(e.ctx, "never", time.Minute), batontype.ErrNotRegistered, "Heartbeat of an unknown instance")
}

func testRegistryValidation(e *env) {
	r := e.p.(lockprovider.Registry)
	e.wantErr(r.Register(e.ctx, instance(""), time.Minute), batontype.ErrInvalid, "Register without LockedBy")
	e.wantErr(r.Register(e.ctx, instance("x"), time.Millisecond), batontype.ErrInvalid, "Register with a 1ms TTL")
	bad := instance("x", "j")
	bad.Jobs[0].Name = "a\x00b"
	e.wantErr(r.Register(e.ctx, bad, time.Minute), batontype.ErrInvalid, "Register with a bad job name")
	bad = instance("x", "j")
	bad.Jobs[0].Skips = &batontype.Skips{Held: -1}
	e.wantErr(r.Register(e.ctx, bad, time.Minute), batontype.ErrInvalid, "Register with a negative skip count")
	bad.Jobs[0].Skips = &batontype.Skips{Held: 1, Last: batontype.Skip{Reason: "bored"}}
	e.wantErr(r.Register(e.ctx, bad, time.Minute), batontype.ErrInvalid, "Register with an unknown skip reason")
	e.wantErr(r.Heartbeat(e.ctx, "", time.Minute), batontype.ErrInvalid, "Heartbeat without LockedBy")
	e.wantErr(r.Deregister(e.ctx, "\n"), batontype.ErrInvalid, "Deregister with a control character")
	if is := e.instances(); len(is) != 0 {
		e.t.Errorf("invalid registrations left entries: %+v", is)
	}
}
