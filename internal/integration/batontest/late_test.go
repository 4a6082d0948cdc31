package batontest

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/baton-go/baton"
	"github.com/baton-go/baton/batontype"
	"github.com/baton-go/baton/lockprovider"
)

// lateCommit is a backend behind a stalled network, as the robustness run
// found on PostgreSQL: the first acquire's request arrives but its
// transaction stays open (its reply and the rest of its request are held),
// so a repeat with the same owner is refused (the row is locked) and the
// first attempt's grant commits afterwards, its lease counted from the
// first attempt. A later repeat with that owner then returns that grant.
type lateCommit struct {
	lockprovider.Provider
	mu    sync.Mutex
	calls int
	first map[string]time.Time // the first send of each owner
}

func (f *lateCommit) Acquire(ctx context.Context, p lockprovider.AcquireParams) (batontype.Lease, error) {
	f.mu.Lock()
	f.calls++
	n := f.calls
	if _, ok := f.first[p.Owner]; !ok {
		f.first[p.Owner] = time.Now()
	}
	g := f.first[p.Owner]
	f.mu.Unlock()
	switch n {
	case 1:
		return batontype.Lease{}, errUnreachable
	case 2:
		time.Sleep(200 * time.Millisecond)
		return batontype.Lease{}, batontype.ErrNotAcquired
	}
	return batontype.Lease{Owner: p.Owner, Token: int64(n), GrantedAt: g, Until: g.Add(p.AtMostFor)}, nil
}

func (f *lateCommit) Release(context.Context, lockprovider.ReleaseParams) error { return nil }

// A refusal after an acquire of unknown outcome does not settle that
// acquire: its grant may still take effect. The lock a later attempt
// returns is never trusted past the lease it holds.
func TestAcquireAfterLateGrant(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &lateCommit{Provider: newMemory(t, nil), first: map[string]time.Time{}}
		l := newLocker(t, f, &baton.Config{MinBackoff: 10 * time.Millisecond, MaxBackoff: 20 * time.Millisecond})
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		k, err := l.Acquire(ctx, "x", &baton.AcquireOptions{AtMostFor: time.Second})
		if err != nil {
			t.Fatal(err)
		}
		f.mu.Lock()
		end := f.first[k.Lease().Owner].Add(time.Second)
		f.mu.Unlock()
		if k.TrustedUntil().After(end) {
			t.Errorf("trusted until %v past the lease's end %v", k.TrustedUntil().Sub(end), end)
		}
		_ = k.Release(ctx)
	})
}

// unknownExtend is a backend whose Extend fails with an error of unknown
// outcome after it may have applied it.
type unknownExtend struct{ lockprovider.Provider }

func (unknownExtend) Extend(context.Context, lockprovider.ExtendParams) (batontype.Lease, error) {
	return batontype.Lease{}, errUnreachable
}

// An Extend of unknown outcome that asked for a shorter lease may have
// shortened it: the window ends where it would have had it succeeded.
func TestExtendUnknownShortens(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		l := newLocker(t, unknownExtend{newMemory(t, nil)}, nil)
		k, err := l.TryAcquire(ctx, "x", &baton.AcquireOptions{AtMostFor: time.Second})
		if err != nil {
			t.Fatal(err)
		}
		sent := time.Now()
		if err := k.Extend(ctx, 100*time.Millisecond); err == nil {
			t.Fatal("Extend succeeded")
		}
		if end := sent.Add(100 * time.Millisecond); k.TrustedUntil().After(end) {
			t.Errorf("trusted %v past the end the extension may have set", k.TrustedUntil().Sub(end))
		}
		_ = k.Release(ctx)
	})
}
