package batontest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/baton-go/baton"
	"github.com/baton-go/baton/fence"
	"github.com/baton-go/baton/fence/pgfence"
	"github.com/baton-go/baton/internal/testenv"
	"github.com/baton-go/baton/internal/testenv/pgenv"
	"github.com/baton-go/baton/internal/testenv/redisenv"
	"github.com/baton-go/baton/lockprovider"
	pgprovider "github.com/baton-go/baton/lockprovider/postgres"
	redisprovider "github.com/baton-go/baton/lockprovider/redis"
)

// TestForceRelease frees a lock the way an operator does (the CLI's
// locks release --force) while its holder is alive and a waiter waits:
// the waiter wakes on the release announcement (polling is slowed to 5s,
// so only the announcement can wake it in time), gets a larger token, its
// fenced write wins and the old holder's later write is rejected, and the
// old holder's context is cancelled at its next renewal.
func TestForceRelease(t *testing.T) {
	pg := pgenv.Schema(t)
	ctx := t.Context()
	if _, err := pg.Pool.Exec(ctx, `CREATE TABLE report (id int PRIMARY KEY, body text, last_fence bigint); INSERT INTO report VALUES (1, '', NULL)`); err != nil {
		t.Fatal(err)
	}
	guard, err := pgfence.NewGuard("report", "id", nil)
	if err != nil {
		t.Fatal(err)
	}
	rp, err := redisprovider.New(redisenv.Client(t), &redisprovider.Config{Prefix: testenv.Prefix(t)})
	if err != nil {
		t.Fatal(err)
	}
	pp, err := pgprovider.New(pg.Pool, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := pp.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		backend string
		p       lockprovider.Provider
	}{{"redis", rp}, {"postgres", pp}} {
		t.Run(c.backend, func(t *testing.T) {
			name := "report-" + c.backend
			slow := &baton.Config{MinBackoff: 5 * time.Second, MaxBackoff: 5 * time.Second}
			oldCfg, newCfg := *slow, *slow
			oldCfg.LockedBy, newCfg.LockedBy = "old-holder", "new-holder"
			la, lb := newLocker(t, c.p, &oldCfg), newLocker(t, c.p, &newCfg)
			a, err := la.Acquire(ctx, name, &baton.AcquireOptions{AtMostFor: 3 * time.Second, AutoRenew: true})
			if err != nil {
				t.Fatal(err)
			}
			if err := guard.Update(ctx, pg.Pool, a.Token(), 1, map[string]any{"body": "old 1"}); err != nil {
				t.Fatalf("old holder's first write: %v", err)
			}
			type result struct {
				lock *baton.Lock
				at   time.Time
				err  error
			}
			got := make(chan result, 1)
			go func() {
				wctx, cancel := context.WithTimeout(ctx, 20*time.Second)
				defer cancel()
				l, err := lb.Acquire(wctx, name, &baton.AcquireOptions{AtMostFor: 30 * time.Second})
				got <- result{l, time.Now(), err}
			}()
			time.Sleep(500 * time.Millisecond) // the waiter has tried once and subscribed

			freed, err := c.p.(lockprovider.Admin).ForceRelease(ctx, lockprovider.ForceReleaseParams{Name: name, Token: a.Token()})
			released := time.Now()
			if err != nil {
				t.Fatalf("ForceRelease: %v", err)
			}
			if freed.LockedBy != "old-holder" || freed.Token != a.Token() {
				t.Errorf("ForceRelease freed %+v, want old-holder's lease with token %d", freed, a.Token())
			}
			r := <-got
			if r.err != nil {
				t.Fatalf("waiter: %v", r.err)
			}
			b := r.lock
			defer func() { _ = b.Release(context.Background()) }()
			wake := r.at.Sub(released)
			t.Logf("%s: waiter granted %v after the forced release", c.backend, wake)
			if wake > time.Second {
				t.Errorf("waiter granted %v after the forced release; polling is at 5s, so it was not woken", wake)
			}
			if b.Token() <= a.Token() {
				t.Errorf("new token %d, want > old token %d", b.Token(), a.Token())
			}
			if err := guard.Update(ctx, pg.Pool, b.Token(), 1, map[string]any{"body": "new 1"}); err != nil {
				t.Fatalf("new holder's write: %v", err)
			}
			if err := guard.Update(ctx, pg.Pool, a.Token(), 1, map[string]any{"body": "old 2"}); !errors.Is(err, fence.ErrStaleToken) {
				t.Errorf("old holder's write after the new holder's: %v, want ErrStaleToken", err)
			}
			var body string
			if err := pg.Pool.QueryRow(ctx, `SELECT body FROM report WHERE id = 1`).Scan(&body); err != nil || body != "new 1" {
				t.Errorf("row holds %q (%v), want the new holder's write", body, err)
			}
			// The renewal every AtMostFor/3 finds the lease gone.
			select {
			case <-a.Context().Done():
				if !errors.Is(context.Cause(a.Context()), baton.ErrLockLost) {
					t.Errorf("old holder's context cause %v, want ErrLockLost", context.Cause(a.Context()))
				}
				t.Logf("%s: old holder's context cancelled %v after the forced release", c.backend, time.Since(released))
			case <-time.After(5 * time.Second):
				t.Error("old holder's context not cancelled 5s after the forced release")
			}
			if err := a.Extend(ctx, time.Second); err == nil {
				t.Error("old holder's Extend succeeded after the forced release")
			}
		})
	}
}
