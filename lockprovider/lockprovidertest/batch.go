package lockprovidertest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/baton-go/baton/batontype"

	"github.com/baton-go/baton/lockprovider"
)

// batchCases check lockprovider.BatchAcquirer: every item of a batch
// behaves as Provider.Acquire of that item (grant, refusal of a held name
// or a stale tick, the holder's idempotent retry, fencing, the minimum
// hold, expiry, LockedBy), batches mix all of these, repeats of a name in
// one batch and oversized batches are refused as documented, and
// concurrent batches grant each name once. When the provider also
// implements lockprovider.BatchLedger, AcquireRunBatch gets the same item
// checks.
func batchCases() []testCase {
	return []testCase{
		{"FreeNames", testBatchFree},
		{"Mixed", testBatchMixed},
		{"Duplicates", testBatchDuplicates},
		{"Token", testBatchToken},
		{"AtLeastFor", testBatchAtLeastFor},
		{"Expiry", testBatchExpiry},
		{"TickPerName", testBatchTick},
		{"Validation", testBatchValidation},
		{"Context", testBatchContext},
		{"NilContext", testBatchNilContext},
		{"Exclusion", testBatchExclusion},
	}
}

// batchReleaseCases check lockprovider.BatchReleaser: every item of
// ReleaseBatch behaves as Provider.Release of that item (the holder's
// release, refusals, the minimum hold, the announcement to waiters,
// repeats and invalid items).
func batchReleaseCases() []testCase {
	return []testCase{
		{"Release", testBatchRelease},
		{"ReleaseAtLeastFor", testBatchReleaseAtLeastFor},
		{"ReleaseWakesWaiters", testBatchReleaseWakes},
		{"ReleaseValidation", testBatchReleaseValidation},
		{"NilContext", testBatchReleaseNilContext},
	}
}

// batchLedgerCases check lockprovider.BatchLedger: AcquireRunBatch opens
// one run record per grant, and ReleaseRunBatch releases as ReleaseBatch
// and completes each run as ReleaseRun.
func batchLedgerCases() []testCase {
	return []testCase{
		{"Ledger", testBatchLedger},
		{"LedgerRelease", testBatchLedgerRelease},
		{"NilContext", testBatchLedgerNilContext},
	}
}

// batchFunc is AcquireBatch or AcquireRunBatch.
type batchFunc func(ctx context.Context, ps []lockprovider.AcquireParams) ([]lockprovider.BatchResult, error)

// batchFuncs returns AcquireBatch and, when the provider has it,
// AcquireRunBatch, so that item semantics are checked on both.
func (e *env) batchFuncs() map[string]batchFunc {
	fs := map[string]batchFunc{"AcquireBatch": e.p.(lockprovider.BatchAcquirer).AcquireBatch}
	if bl, ok := e.p.(lockprovider.BatchLedger); ok {
		fs["AcquireRunBatch"] = func(ctx context.Context, ps []lockprovider.AcquireParams) ([]lockprovider.BatchResult, error) {
			return bl.AcquireRunBatch(ctx, ps, lockprovider.RunStart{})
		}
	}
	return fs
}

func (e *env) mustBatch(f batchFunc, ps []lockprovider.AcquireParams) []lockprovider.BatchResult {
	e.t.Helper()
	res, err := f(e.ctx, ps)
	if err != nil {
		e.t.Fatalf("batch of %d: %v", len(ps), err)
	}
	if len(res) != len(ps) {
		e.t.Fatalf("batch of %d returned %d results", len(ps), len(res))
	}
	for i, r := range res {
		e.slow(r.Err, ps[i].AtMostFor, "AcquireBatch")
	}
	return res
}

func item(name string, tick time.Time, atMost, atLeast time.Duration) lockprovider.AcquireParams {
	return lockprovider.AcquireParams{
		Name: name, Owner: lockprovider.NewOwner(), LockedBy: "lockprovidertest-batch",
		AtMostFor: atMost, AtLeastFor: atLeast, Tick: tick,
	}
}

// wantGrant checks that r is a grant of p.
func (e *env) wantGrant(r lockprovider.BatchResult, p lockprovider.AcquireParams, what string) {
	e.t.Helper()
	if r.Err != nil {
		e.t.Errorf("%s: %q: got error %v, want a grant", what, p.Name, r.Err)
		return
	}
	e.checkLease(r.Lease, p.Name, p.Owner)
	l := r.Lease
	if got := l.Until.Sub(l.GrantedAt); !near(got, p.AtMostFor, tol) {
		e.t.Errorf("%s: %q: Until-GrantedAt = %v, want AtMostFor %v", what, p.Name, got, p.AtMostFor)
	}
	if got := l.AtLeastUntil.Sub(l.GrantedAt); !near(got, p.AtLeastFor, tol) {
		e.t.Errorf("%s: %q: AtLeastUntil-GrantedAt = %v, want AtLeastFor %v", what, p.Name, got, p.AtLeastFor)
	}
	if !nearTime(l.GrantedAt, time.Now(), 5*time.Minute) {
		e.t.Errorf("%s: %q: GrantedAt %v is far from the local time", what, p.Name, l.GrantedAt)
	}
	if !l.Tick.Equal(p.Tick) {
		e.t.Errorf("%s: %q: Tick = %v, want %v", what, p.Name, l.Tick, p.Tick)
	}
}

// Free names are all granted, each with its own parameters, and are then
// held for everyone else; the grants release through Provider.Release.
func testBatchFree(e *env) {
	for what, f := range e.batchFuncs() {
		var ps []lockprovider.AcquireParams
		for i := range 20 {
			var tick time.Time
			if i%2 == 0 {
				tick = baseTick.Add(time.Duration(i) * time.Second)
			}
			ps = append(ps, item(e.name(), tick, long+time.Duration(i)*time.Second, 0))
		}
		res := e.mustBatch(f, ps)
		in, inspects := e.p.(lockprovider.Inspector)
		for i, p := range ps {
			e.wantGrant(res[i], p, what)
			e.wantHeld(p.Name, what+": after a batch grant")
			if inspects {
				// LockedBy travels with the grant as in Acquire.
				info := e.inspect(in, p.Name)
				if info.LockedBy != p.LockedBy || info.Token != res[i].Lease.Token {
					e.t.Errorf("%s: Inspect(%q) = LockedBy %q Token %d, want %q %d", what, p.Name, info.LockedBy, info.Token, p.LockedBy, res[i].Lease.Token)
				}
			}
			e.mustRelease(p.Name, p.Owner)
			e.wantFree(p.Name, what+": after releasing a batch grant")
		}
	}
}

// One batch mixes every answer Acquire can give: a free name, a name
// held by another owner, a stale tick, the holder's own retry (the same
// grant, unchanged, whatever its parameters), an invalid item, and a
// name whose lease lapsed.
func testBatchMixed(e *env) {
	for what, f := range e.batchFuncs() {
		free := item(e.name(), baseTick, long, 0)
		held := item(e.name(), baseTick, long, 0)
		heldBy := e.mustAcquire(held.Name, lockprovider.NewOwner(), long, 0)
		stale := item(e.name(), baseTick, long, 0)
		e.grantTick(stale.Name, baseTick.Add(time.Hour), what+": newer tick before the batch")
		mine := item(e.name(), time.Time{}, long, time.Second)
		first := e.mustAcquire(mine.Name, mine.Owner, long, time.Second)
		mine.AtMostFor, mine.AtLeastFor = 2*long, 0 // a retry keeps the first grant
		bad := item(e.name(), baseTick, long, 0)
		bad.AtLeastFor = 2 * long
		lapsed := item(e.name(), time.Time{}, long, 0)
		old := e.mustAcquire(lapsed.Name, lockprovider.NewOwner(), e.short(30*time.Millisecond), 0)
		sleepPast(time.Now(), e.short(30*time.Millisecond))
		staleHeld := item(e.name(), baseTick, long, 0) // held by another and stale: held wins, as in Acquire
		e.mustAcquire(staleHeld.Name, lockprovider.NewOwner(), long, 0)
		if _, err := e.acquireTick(staleHeld.Name, lockprovider.NewOwner(), baseTick, long); !errors.Is(err, batontype.ErrNotAcquired) {
			e.t.Fatalf("%s: single Acquire of a held name with a tick: %v, want ErrNotAcquired", what, err)
		}

		ps := []lockprovider.AcquireParams{free, held, stale, mine, bad, lapsed, staleHeld}
		res := e.mustBatch(f, ps)
		e.wantGrant(res[0], free, what+": free")
		e.wantErr(res[1].Err, batontype.ErrNotAcquired, what+": held by another owner")
		e.wantErr(res[2].Err, batontype.ErrStaleTick, what+": stale tick")
		if res[3].Err != nil || !sameLease(res[3].Lease, first) {
			e.t.Errorf("%s: holder's retry = %+v, %v; want the first grant %+v", what, res[3].Lease, res[3].Err, first)
		}
		var ve *batontype.ValidationError
		if !errors.As(res[4].Err, &ve) || !errors.Is(res[4].Err, batontype.ErrInvalid) {
			e.t.Errorf("%s: invalid item: got %v, want a *ValidationError matching ErrInvalid", what, res[4].Err)
		}
		e.wantGrant(res[5], lapsed, what+": lapsed")
		if res[5].Err == nil && res[5].Lease.Token <= old.Token {
			e.t.Errorf("%s: token after a lapse %d, want > %d", what, res[5].Lease.Token, old.Token)
		}
		e.wantErr(res[6].Err, batontype.ErrNotAcquired, what+": held by another owner, stale tick")
		for _, r := range res {
			if r.Err != nil && r.Lease != (batontype.Lease{}) {
				e.t.Errorf("%s: a refused item carries a lease %+v", what, r.Lease)
			}
		}
		// Refusals changed nothing: the holder still holds, and can release.
		e.mustRelease(held.Name, heldBy.Owner)
		// A tick refused because the name was held was not used up.
		e.grantTick(held.Name, baseTick, what+": the tick of an item refused as held")
		e.wantFree(bad.Name, what+": the invalid item was not attempted")
		e.mustRelease(mine.Name, mine.Owner)
	}
}

// A name repeated in one batch is attempted once, at its first
// occurrence; the repeats get a *ValidationError, whatever their owner.
func testBatchDuplicates(e *env) {
	for what, f := range e.batchFuncs() {
		a, b := item(e.name(), baseTick, long, 0), item(e.name(), time.Time{}, long, 0)
		a2 := a // same owner
		b2 := item(b.Name, time.Time{}, long, 0)
		res := e.mustBatch(f, []lockprovider.AcquireParams{a, b, a2, b2, a})
		e.wantGrant(res[0], a, what+": first of a repeated name")
		e.wantGrant(res[1], b, what+": first of a repeated name")
		for _, i := range []int{2, 3, 4} {
			if !errors.Is(res[i].Err, batontype.ErrInvalid) {
				e.t.Errorf("%s: repeat at %d: got %v, want ErrInvalid", what, i, res[i].Err)
			}
		}
		e.mustRelease(a.Name, a.Owner)
		e.mustRelease(b.Name, b.Owner)
	}
}

// Tokens increase per name across single and batch grants, and a
// batch's retry returns the same token.
func testBatchToken(e *env) {
	for what, f := range e.batchFuncs() {
		names := []string{e.name(), e.name(), e.name()}
		last := map[string]int64{}
		for _, n := range names {
			o := lockprovider.NewOwner()
			last[n] = e.mustAcquire(n, o, long, 0).Token
			e.mustRelease(n, o)
		}
		for round := range 3 {
			var ps []lockprovider.AcquireParams
			for _, n := range names {
				ps = append(ps, item(n, time.Time{}, long, 0))
			}
			res := e.mustBatch(f, ps)
			again := e.mustBatch(f, ps)
			for i, p := range ps {
				e.wantGrant(res[i], p, what)
				if res[i].Lease.Token <= last[p.Name] {
					e.t.Errorf("%s: round %d: %q token %d, want > %d", what, round, p.Name, res[i].Lease.Token, last[p.Name])
				}
				if again[i].Err != nil || !sameLease(again[i].Lease, res[i].Lease) {
					e.t.Errorf("%s: retried batch: %q = %+v, %v; want %+v", what, p.Name, again[i].Lease, again[i].Err, res[i].Lease)
				}
				last[p.Name] = res[i].Lease.Token
				e.mustRelease(p.Name, p.Owner)
				// A single grant after the batch continues the sequence.
				o := lockprovider.NewOwner()
				l := e.mustAcquire(p.Name, o, long, 0)
				if l.Token <= last[p.Name] {
					e.t.Errorf("%s: single grant after a batch: token %d, want > %d", what, l.Token, last[p.Name])
				}
				last[p.Name] = l.Token
				e.mustRelease(p.Name, o)
			}
		}
	}
}

// A batch grant released inside its AtLeastFor stays held until then.
func testBatchAtLeastFor(e *env) {
	f := e.batchFuncs()["AcquireBatch"]
	e.timed(300*time.Millisecond, func(scale time.Duration) bool {
		atLeast := 300 * time.Millisecond * scale
		p, q := item(e.name(), baseTick, long, atLeast), item(e.name(), time.Time{}, long, 0)
		start := time.Now()
		res := e.mustBatch(f, []lockprovider.AcquireParams{p, q})
		e.wantGrant(res[0], p, "AcquireBatch")
		e.wantGrant(res[1], q, "AcquireBatch")
		e.mustRelease(p.Name, p.Owner)
		e.mustRelease(q.Name, q.Owner)
		e.wantFree(q.Name, "released without AtLeastFor")
		if !e.heldUntil(p.Name, start, atLeast, "released inside AtLeastFor") {
			return false
		}
		freeAt := e.waitFree(p.Name, "after AtLeastFor")
		if freeAt.Before(start.Add(atLeast - tol)) {
			e.t.Errorf("name free %v after the grant, before AtLeastFor %v", freeAt.Sub(start), atLeast)
		}
		return true
	})
}

// A batch grant lapses at AtMostFor, and its tick stays used.
func testBatchExpiry(e *env) {
	f := e.batchFuncs()["AcquireBatch"]
	d := e.short(50 * time.Millisecond)
	p := item(e.name(), baseTick, d, 0)
	start := time.Now()
	e.wantGrant(e.mustBatch(f, []lockprovider.AcquireParams{p})[0], p, "AcquireBatch")
	e.waitFree(p.Name, "after AtMostFor")
	if time.Since(start) < d-tol {
		e.t.Errorf("lease lapsed after %v, before AtMostFor %v", time.Since(start), d)
	}
	res := e.mustBatch(f, []lockprovider.AcquireParams{item(p.Name, baseTick, long, 0)})
	e.wantErr(res[0].Err, batontype.ErrStaleTick, "same tick after the lease lapsed")
}

// Ticks are checked and remembered per name, as in Acquire: a batch
// for a tick is refused on the names that already ran it and granted on
// the others; a batch without ticks neither checks nor resets them.
func testBatchTick(e *env) {
	for what, f := range e.batchFuncs() {
		names := []string{e.name(), e.name(), e.name(), e.name()}
		t1 := baseTick
		e.grantTick(names[0], t1, what+": single grant of t1")
		e.grantTick(names[1], t1.Add(-time.Hour), what+": single grant of an older tick")
		var ps []lockprovider.AcquireParams
		for _, n := range names {
			ps = append(ps, item(n, t1, long, 0))
		}
		res := e.mustBatch(f, ps)
		e.wantErr(res[0].Err, batontype.ErrStaleTick, what+": tick already granted")
		for i := 1; i < len(names); i++ {
			e.wantGrant(res[i], ps[i], what+": newer tick")
			e.mustRelease(ps[i].Name, ps[i].Owner)
		}
		// The same tick again: refused everywhere.
		for i := range ps {
			ps[i].Owner = lockprovider.NewOwner()
		}
		for i, r := range e.mustBatch(f, ps) {
			e.wantErr(r.Err, batontype.ErrStaleTick, fmt.Sprintf("%s: tick again on %d", what, i))
		}
		// No tick: granted, and the newest tick stays t1.
		for i := range ps {
			ps[i].Owner, ps[i].Tick = lockprovider.NewOwner(), time.Time{}
		}
		for i, r := range e.mustBatch(f, ps) {
			e.wantGrant(r, ps[i], what+": no tick")
			e.mustRelease(ps[i].Name, ps[i].Owner)
		}
		for _, n := range names {
			e.refuseTick(n, t1, what+": t1 after a batch without ticks")
			e.grantTick(n, t1.Add(time.Millisecond), what+": a tick 1ms newer after the batch")
		}
	}
}

// Invalid items are refused one by one; an oversized batch is refused as
// a whole and attempts nothing; an empty batch returns nothing.
func testBatchValidation(e *env) {
	for what, f := range e.batchFuncs() {
		good := item(e.name(), time.Time{}, long, 0)
		bads := []lockprovider.AcquireParams{
			item("", time.Time{}, long, 0),
			item(e.name()+"\x00", time.Time{}, long, 0),
			{Name: e.name(), AtMostFor: long}, // no owner
			item(e.name(), time.Time{}, 0, 0),
			item(e.name(), time.Time{}, long, -time.Second),
			item(e.name(), time.Unix(-5, 0), long, 0),
		}
		res := e.mustBatch(f, append([]lockprovider.AcquireParams{good}, bads...))
		e.wantGrant(res[0], good, what+": valid item beside invalid ones")
		for i, r := range res[1:] {
			var ve *batontype.ValidationError
			if !errors.As(r.Err, &ve) || !errors.Is(r.Err, batontype.ErrInvalid) {
				e.t.Errorf("%s: invalid item %d: got %v, want a *ValidationError matching ErrInvalid", what, i, r.Err)
			}
		}
		e.mustRelease(good.Name, good.Owner)

		big := make([]lockprovider.AcquireParams, lockprovider.MaxBatch+1)
		for i := range big {
			big[i] = item(fmt.Sprintf("%s-big-%d", good.Name, i), time.Time{}, long, 0)
		}
		r, err := f(e.ctx, big)
		var ve *batontype.ValidationError
		if r != nil || !errors.As(err, &ve) || !errors.Is(err, batontype.ErrInvalid) {
			e.t.Errorf("%s: batch of MaxBatch+1: got %d results, %v; want a *ValidationError", what, len(r), err)
		}
		e.wantFree(big[0].Name, what+": an oversized batch attempts nothing")

		r, err = f(e.ctx, nil)
		if len(r) != 0 || err != nil {
			e.t.Errorf("%s: empty batch: got %d results, %v; want none", what, len(r), err)
		}
	}
}

// A batch on a done context grants nothing: every item fails.
func testBatchContext(e *env) {
	for what, f := range e.batchFuncs() {
		ps := []lockprovider.AcquireParams{item(e.name(), baseTick, long, 0), item(e.name(), time.Time{}, long, 0)}
		res, err := f(cancelled(e.ctx), ps)
		if err != nil {
			continue // refused as a whole: nothing attempted either
		}
		if len(res) != len(ps) {
			e.t.Fatalf("%s: %d results for %d items", what, len(res), len(ps))
		}
		for i, r := range res {
			if !errors.Is(r.Err, context.Canceled) {
				e.t.Errorf("%s: item %d on a cancelled context: %v, want context.Canceled", what, i, r.Err)
			}
		}
		// Nothing was sent, so the tick is still unused.
		e.grantTick(ps[0].Name, baseTick, what+": after a cancelled batch")
	}
}

// Instances claiming the same names for the same tick in concurrent
// batches (in different orders) are each granted a name at most once, and
// every name exactly once.
func testBatchExclusion(e *env) {
	f := e.batchFuncs()["AcquireBatch"]
	const workers, n = 4, 50
	names := make([]string, n)
	for i := range names {
		names[i] = e.name()
	}
	tick := baseTick.Add(time.Minute)
	var (
		mu      sync.Mutex
		granted = map[string]int{}
		wg      sync.WaitGroup
	)
	for w := range workers {
		wg.Go(func() {
			ps := make([]lockprovider.AcquireParams, n)
			for i := range ps {
				// Each worker in its own order, so that row or key locks
				// are taken in different orders.
				ps[i] = item(names[(i*(w+1)+w)%n], tick, long, 0)
			}
			res, err := f(e.ctx, dedupe(ps))
			if err != nil {
				e.t.Errorf("worker %d: %v", w, err)
				return
			}
			mu.Lock()
			defer mu.Unlock()
			for i, r := range res {
				switch {
				case r.Err == nil:
					granted[r.Lease.Name]++
				case errors.Is(r.Err, batontype.ErrNotAcquired), errors.Is(r.Err, batontype.ErrStaleTick):
				default:
					e.t.Errorf("worker %d: item %d: unexpected error %v", w, i, r.Err)
				}
			}
		})
	}
	wg.Wait()
	for _, name := range names {
		if granted[name] != 1 {
			e.t.Errorf("%q granted %d times for one tick, want once", name, granted[name])
		}
	}
}

// dedupe drops repeated names (the permutations above may repeat some).
func dedupe(ps []lockprovider.AcquireParams) []lockprovider.AcquireParams {
	seen := map[string]bool{}
	out := ps[:0]
	for _, p := range ps {
		if !seen[p.Name] {
			seen[p.Name] = true
			out = append(out, p)
		}
	}
	return out
}

// AcquireRunBatch opens one started run per grant, with the item's tick,
// LockedBy and token and the batch's flags, and none for a refusal or a
// retry.
func testBatchLedger(e *env) {
	bl := e.p.(lockprovider.BatchLedger)
	if _, ok := e.p.(lockprovider.Ledger); !ok {
		e.t.Fatalf("provider %T implements BatchLedger but not Ledger", e.p)
	}
	a, b := item(e.name(), baseTick, long, 0), item(e.name(), baseTick, long, 0)
	e.grantTick(b.Name, baseTick, "tick granted before the batch")
	run := lockprovider.RunStart{CatchUp: true}
	res, err := bl.AcquireRunBatch(e.ctx, []lockprovider.AcquireParams{a, b}, run)
	if err != nil {
		e.t.Fatal(err)
	}
	e.wantGrant(res[0], a, "AcquireRunBatch")
	e.wantErr(res[1].Err, batontype.ErrStaleTick, "AcquireRunBatch: stale tick")
	// A retry opens no second record.
	if again, err := bl.AcquireRunBatch(e.ctx, []lockprovider.AcquireParams{a}, run); err != nil || again[0].Err != nil {
		e.t.Fatalf("retried AcquireRunBatch: %v %v", err, again)
	}
	recs := e.runs(a.Name, batontype.RunQuery{Job: a.Name})
	if len(recs) != 1 {
		e.t.Fatalf("runs of %q = %+v, want one", a.Name, recs)
	}
	r := recs[0]
	l := res[0].Lease
	if r.Token != l.Token || !r.Tick.Equal(a.Tick) || r.LockedBy != a.LockedBy || !r.CatchUp ||
		r.Outcome != batontype.OutcomeRunning || !nearTime(r.Started, l.GrantedAt, inspectTol) {
		e.t.Errorf("run record %+v does not match grant %+v of %+v", r, l, a)
	}
	if got := e.runs(b.Name, batontype.RunQuery{Job: b.Name}); len(got) != 0 {
		e.t.Errorf("runs of %q = %+v, want none: the refusal records nothing", b.Name, got)
	}
	// The release completes the record as for AcquireRun.
	if err := e.releaseRunFlags(l, a.LockedBy, run, batontype.OutcomeSucceeded, "", batontype.Retention{}); err != nil {
		e.t.Fatalf("ReleaseRun: %v", err)
	}
	if got := e.runs(a.Name, batontype.RunQuery{Job: a.Name}); len(got) != 1 || got[0].Outcome != batontype.OutcomeSucceeded {
		e.t.Errorf("after ReleaseRun: %+v", got)
	}
}

// releaser returns the provider's ReleaseBatch; the release cases need it.
func (e *env) releaser() func(context.Context, []lockprovider.ReleaseParams) ([]error, error) {
	return e.p.(lockprovider.BatchReleaser).ReleaseBatch
}

func (e *env) mustReleaseBatch(ps []lockprovider.ReleaseParams) []error {
	e.t.Helper()
	errs, err := e.releaser()(e.ctx, ps)
	if err != nil {
		e.t.Fatalf("ReleaseBatch of %d: %v", len(ps), err)
	}
	if len(errs) != len(ps) {
		e.t.Fatalf("ReleaseBatch of %d returned %d errors", len(ps), len(errs))
	}
	return errs
}

// One release batch mixes every answer Release can give: the holder's
// release (the name is free at once, and the next grant's token is
// larger), a name held by another owner, a free name, a lapsed lease, a
// repeated name and an invalid item.
func testBatchRelease(e *env) {
	mine := make([]batontype.Lease, 3)
	for i := range mine {
		mine[i] = e.mustAcquire(e.name(), lockprovider.NewOwner(), long, 0)
	}
	other := e.mustAcquire(e.name(), lockprovider.NewOwner(), long, 0)
	free := e.name()
	lapsed := e.mustAcquire(e.name(), lockprovider.NewOwner(), e.short(30*time.Millisecond), 0)
	sleepPast(time.Now(), e.short(30*time.Millisecond))
	ps := []lockprovider.ReleaseParams{
		{Name: mine[0].Name, Owner: mine[0].Owner},
		{Name: other.Name, Owner: lockprovider.NewOwner()},
		{Name: mine[1].Name, Owner: mine[1].Owner},
		{Name: free, Owner: lockprovider.NewOwner()},
		{Name: lapsed.Name, Owner: lapsed.Owner},
		{Name: mine[0].Name, Owner: mine[0].Owner}, // a repeat
		{Name: "", Owner: lockprovider.NewOwner()}, // invalid
		{Name: mine[2].Name, Owner: mine[2].Owner},
	}
	errs := e.mustReleaseBatch(ps)
	for _, i := range []int{0, 2, 7} {
		if errs[i] != nil {
			e.t.Errorf("release of a held lease (item %d): %v", i, errs[i])
		}
		e.wantFree(ps[i].Name, "after its batch release")
	}
	e.wantErr(errs[1], batontype.ErrNotHeld, "release by a non-holder")
	e.wantHeld(other.Name, "after a batch release by a non-holder")
	e.wantErr(errs[3], batontype.ErrNotHeld, "release of a free name")
	e.wantErr(errs[4], batontype.ErrNotHeld, "release of a lapsed lease")
	var ve *batontype.ValidationError
	for _, i := range []int{5, 6} {
		if !errors.As(errs[i], &ve) || !errors.Is(errs[i], batontype.ErrInvalid) {
			e.t.Errorf("item %d: got %v, want a *ValidationError matching ErrInvalid", i, errs[i])
		}
	}
	for _, l := range mine {
		o := lockprovider.NewOwner()
		if next := e.mustAcquire(l.Name, o, long, 0); next.Token <= l.Token {
			e.t.Errorf("%q: token after a batch release %d, want > %d", l.Name, next.Token, l.Token)
		}
		e.mustRelease(l.Name, o)
	}
	// Released once, the items are not held any more: a second batch
	// answers ErrNotHeld for each, as a second Release does.
	for i, err := range e.mustReleaseBatch([]lockprovider.ReleaseParams{ps[0], ps[2], ps[7]}) {
		e.wantErr(err, batontype.ErrNotHeld, fmt.Sprintf("second release of item %d", i))
	}
}

// A lease released by a batch inside its AtLeastFor stays held until
// then, as with Release.
func testBatchReleaseAtLeastFor(e *env) {
	e.timed(300*time.Millisecond, func(scale time.Duration) bool {
		atLeast := 300 * time.Millisecond * scale
		start := time.Now()
		p := e.mustAcquire(e.name(), lockprovider.NewOwner(), long, atLeast)
		q := e.mustAcquire(e.name(), lockprovider.NewOwner(), long, 0)
		for i, err := range e.mustReleaseBatch([]lockprovider.ReleaseParams{{Name: p.Name, Owner: p.Owner}, {Name: q.Name, Owner: q.Owner}}) {
			if err != nil {
				e.t.Fatalf("batch release of item %d: %v", i, err)
			}
		}
		e.wantFree(q.Name, "released without AtLeastFor")
		if !e.heldUntil(p.Name, start, atLeast, "released by a batch inside AtLeastFor") {
			return false
		}
		if freeAt := e.waitFree(p.Name, "after AtLeastFor"); freeAt.Before(start.Add(atLeast - tol)) {
			e.t.Errorf("name free %v after the grant, before AtLeastFor %v", freeAt.Sub(start), atLeast)
		}
		return true
	})
}

// Waiters registered for release notifications wake on a batch release,
// one per name released.
func testBatchReleaseWakes(e *env) {
	rn, ok := e.p.(lockprovider.ReleaseNotifier)
	if !ok {
		e.t.Skip("provider does not implement lockprovider.ReleaseNotifier")
	}
	release := e.releaser()
	var ps []lockprovider.ReleaseParams
	var chs []chan struct{}
	for range 3 {
		l := e.mustAcquire(e.name(), lockprovider.NewOwner(), long, 0)
		ch := make(chan struct{}, 1)
		e.register(rn, l.Name, ch)
		ps, chs = append(ps, lockprovider.ReleaseParams{Name: l.Name, Owner: l.Owner}), append(chs, ch)
	}
	if _, err := release(e.ctx, ps); err != nil {
		e.t.Fatalf("ReleaseBatch: %v", err)
	}
	for i, ch := range chs {
		e.wantSignal(ch, fmt.Sprintf("batch release of item %d", i))
	}
}

// An oversized batch is refused whole; an empty one answers nothing; an
// invalid owner is the item's own error.
func testBatchReleaseValidation(e *env) {
	release := e.releaser()
	l := e.mustAcquire(e.name(), lockprovider.NewOwner(), long, 0)
	big := make([]lockprovider.ReleaseParams, lockprovider.MaxBatch+1)
	for i := range big {
		big[i] = lockprovider.ReleaseParams{Name: e.name(), Owner: lockprovider.NewOwner()}
	}
	big[0] = lockprovider.ReleaseParams{Name: l.Name, Owner: l.Owner}
	errs, err := release(e.ctx, big)
	var ve *batontype.ValidationError
	if !errors.As(err, &ve) || !errors.Is(err, batontype.ErrInvalid) || errs != nil {
		e.t.Errorf("oversized batch: %v, %v; want nil and a *ValidationError matching ErrInvalid", errs, err)
	}
	e.wantHeld(l.Name, "after an oversized release batch")
	if errs, err := release(e.ctx, nil); err != nil || len(errs) != 0 {
		e.t.Errorf("empty batch: %v, %v; want no results", errs, err)
	}
	errs = e.mustReleaseBatch([]lockprovider.ReleaseParams{{Name: l.Name, Owner: ""}, {Name: l.Name, Owner: l.Owner}})
	e.wantErr(errs[0], batontype.ErrInvalidOwner, "empty owner")
	if errs[1] != nil {
		e.t.Errorf("holder's release after an invalid item of the same name: %v", errs[1])
	}
}

// ReleaseRunBatch releases each item as ReleaseBatch does and completes
// its run as ReleaseRun does: outcome, error text and the end at the
// start plus Elapsed; a lost lease still gets its outcome. An invalid end
// is its item's own error; ends of another length refuse the batch.
func testBatchLedgerRelease(e *env) {
	bl := e.p.(lockprovider.BatchLedger)
	ok1, failed, lost, bad := item(e.name(), baseTick, long, 0), item(e.name(), baseTick, long, 0),
		item(e.name(), baseTick, e.short(30*time.Millisecond), 0), item(e.name(), baseTick, long, 0)
	ps := []lockprovider.AcquireParams{ok1, failed, lost, bad}
	res, err := bl.AcquireRunBatch(e.ctx, ps, lockprovider.RunStart{})
	if err != nil {
		e.t.Fatal(err)
	}
	for i, p := range ps {
		e.wantGrant(res[i], p, "AcquireRunBatch")
	}
	sleepPast(res[2].Lease.GrantedAt, e.short(30*time.Millisecond))
	e.waitFree(lost.Name, "after AtMostFor")
	end := func(l batontype.Lease, out batontype.Outcome, msg string, took time.Duration) lockprovider.RunEnd {
		return lockprovider.RunEnd{
			Run:     batontype.RunRecord{Job: l.Name, Token: l.Token, Tick: l.Tick, LockedBy: "lockprovidertest-batch", Started: l.GrantedAt},
			Outcome: out, Error: msg, Elapsed: took,
		}
	}
	rps := make([]lockprovider.ReleaseParams, len(ps))
	for i, p := range ps {
		rps[i] = lockprovider.ReleaseParams{Name: p.Name, Owner: p.Owner}
	}
	ends := []lockprovider.RunEnd{
		end(res[0].Lease, batontype.OutcomeSucceeded, "", 1500*time.Millisecond),
		end(res[1].Lease, batontype.OutcomeFailed, "boom", 0),
		end(res[2].Lease, batontype.OutcomeLockLost, "lease lost", 0),
		end(res[3].Lease, batontype.Outcome("no such outcome"), "", 0),
	}
	if _, err := bl.ReleaseRunBatch(e.ctx, rps, ends[:3]); !errors.Is(err, batontype.ErrInvalid) {
		e.t.Errorf("ends shorter than the batch: %v, want ErrInvalid", err)
	}
	e.wantHeld(ok1.Name, "after a refused ReleaseRunBatch")
	errs, err := bl.ReleaseRunBatch(e.ctx, rps, ends)
	if err != nil || len(errs) != len(rps) {
		e.t.Fatalf("ReleaseRunBatch: %v, %v", errs, err)
	}
	for i := range 2 {
		if errs[i] != nil {
			e.t.Errorf("item %d: %v", i, errs[i])
		}
		e.wantFree(ps[i].Name, "after ReleaseRunBatch")
	}
	e.wantErr(errs[2], batontype.ErrNotHeld, "release of a lapsed lease")
	e.wantErr(errs[3], batontype.ErrInvalid, "an invalid end")
	e.wantHeld(bad.Name, "an item with an invalid end is not attempted")
	for i := range 3 {
		got := e.runs(ps[i].Name, batontype.RunQuery{})
		if len(got) != 1 || got[0].Outcome != ends[i].Outcome || got[0].Error != ends[i].Error || got[0].Finished.IsZero() {
			e.t.Errorf("runs of item %d = %+v, want one ended %q %q", i, got, ends[i].Outcome, ends[i].Error)
		}
	}
	if got := e.runs(ok1.Name, batontype.RunQuery{}); len(got) == 1 && got[0].Duration() != 1500*time.Millisecond {
		e.t.Errorf("run lasted %v, want Elapsed 1.5s", got[0].Duration())
	}
}
