// Package atleastcheck is the check, shared by the provider modules'
// tests, that an Extend after a slow acquire keeps the acquire's
// AtLeastFor bound. It imports no driver.
package atleastcheck

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/baton-go/baton"
	"github.com/baton-go/baton/internal/testenv"
	"github.com/baton-go/baton/lockprovider"
)

// Timing of the check: each chunk through the proxies is delayed by
// Delay during the acquire.
const (
	Delay      = 150 * time.Millisecond
	AtLeastFor = time.Second
	AtMostFor  = 10 * time.Second
)

// ExtendKeepsBound acquires a name through proxied (its connections go
// through proxies) while they delay every chunk, then, fast again, extends
// it and releases it early; it then acquires the name through direct and
// fails t if that grant came more than rounding (the backend's rounding of
// stored times) before the first grant's GrantedAt + AtLeastFor.
func ExtendKeepsBound(t *testing.T, proxied, direct lockprovider.Provider, rounding time.Duration, proxies ...*testenv.Proxy) {
	t.Helper()
	ctx := context.Background()
	l, err := baton.NewLocker(proxied, &baton.Config{CallTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	other, err := baton.NewLocker(direct, nil)
	if err != nil {
		t.Fatal(err)
	}
	// Open the proxied connections before the delay, so the slow round
	// trips are the acquire's own.
	warm, err := l.TryAcquire(ctx, "warm", nil)
	if err != nil {
		t.Fatal(err)
	}
	_ = warm.Release(ctx)

	setDelay := func(d time.Duration) {
		for _, p := range proxies {
			p.SetDelay(d)
		}
	}
	setDelay(Delay)
	a, err := l.TryAcquire(ctx, "bound", &baton.AcquireOptions{AtMostFor: AtMostFor, AtLeastFor: AtLeastFor})
	setDelay(0)
	if err != nil {
		t.Fatal(err)
	}
	granted := a.Lease().GrantedAt
	if err := a.Extend(ctx, AtMostFor); err != nil {
		t.Fatal(err)
	}
	if err := a.Release(ctx); err != nil {
		t.Fatal(err)
	}
	var b *baton.Lock
	for {
		if b, err = other.TryAcquire(ctx, "bound", nil); err == nil {
			break
		}
		if !errors.Is(err, baton.ErrNotAcquired) {
			t.Fatal(err)
		}
		// Waiting past AtMostFor means the early release was lost, a
		// failure of its own.
		if time.Since(granted) > AtMostFor {
			t.Fatalf("still held %v after the grant", time.Since(granted))
		}
		time.Sleep(5 * time.Millisecond) // polling the backend: its clock decides
	}
	defer b.Release(ctx)
	t.Logf("second owner granted %v after the first grant (bound %v)", b.Lease().GrantedAt.Sub(granted), AtLeastFor)
	if early := granted.Add(AtLeastFor).Sub(b.Lease().GrantedAt); early > rounding {
		t.Errorf("second owner granted %v before the first grant's AtLeastFor bound", early)
	}
}
