package etcd_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/baton-go/baton"
	"github.com/baton-go/baton/internal/testenv"
	"github.com/baton-go/baton/lockprovider/etcd"
)

// An acquire whose round trips are slow (the proxy delays every chunk),
// then an Extend over the same connection, fast again, and an early
// Release: the Extend must keep the bound the acquire set, so another
// owner is granted the name no earlier than GrantedAt + AtLeastFor. The
// other providers run the same check in internal/integration/batontest.
// By default the bound ends when etcd ends its lease, rounded up to whole
// seconds; with ClockExpiry, at its millisecond.
func TestFaultExtendKeepsAtLeastBound(t *testing.T) {
	for _, clock := range []bool{false, true} {
		t.Run(fmt.Sprintf("ClockExpiry=%v", clock), func(t *testing.T) { testExtendKeepsAtLeastBound(t, clock) })
	}
}

func testExtendKeepsAtLeastBound(t *testing.T, clockExpiry bool) {
	const (
		delay      = 150 * time.Millisecond
		atLeastFor = time.Second
		atMostFor  = 10 * time.Second
		rounding   = 2 * time.Millisecond // the bound is kept in milliseconds
	)
	ctx := context.Background()
	c := testenv.StartEtcdCluster(t, 1)
	proxy, u := testenv.ProxyURL(t, c.Members[0].URL())
	prefix := "t" + testenv.Unique() + "/"
	locker := func(cli *clientv3.Client) *baton.Locker {
		p, err := etcd.New(cli, &etcd.Config{Prefix: prefix, ClockExpiry: clockExpiry})
		if err != nil {
			t.Fatal(err)
		}
		l, err := baton.NewLocker(p, &baton.Config{CallTimeout: 5 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	l, other := locker(clientAt(t, u)), locker(client(t, c))
	// Open the proxied connection before the delay, so the slow round
	// trips are the acquire's own.
	warm, err := l.TryAcquire(ctx, "warm", nil)
	if err != nil {
		t.Fatal(err)
	}
	_ = warm.Release(ctx)

	proxy.SetDelay(delay)
	a, err := l.TryAcquire(ctx, "bound", &baton.AcquireOptions{AtMostFor: atMostFor, AtLeastFor: atLeastFor})
	proxy.SetDelay(0)
	if err != nil {
		t.Fatal(err)
	}
	granted := a.Lease().GrantedAt
	if err := a.Extend(ctx, atMostFor); err != nil {
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
		if time.Since(granted) > atMostFor {
			t.Fatalf("still held %v after the grant", time.Since(granted))
		}
		time.Sleep(5 * time.Millisecond) // polling the backend: its clock decides
	}
	defer b.Release(ctx)
	t.Logf("second owner granted %v after the first grant (bound %v)", b.Lease().GrantedAt.Sub(granted), atLeastFor)
	if early := granted.Add(atLeastFor).Sub(b.Lease().GrantedAt); early > rounding {
		t.Errorf("second owner granted %v before the first grant's AtLeastFor bound", early)
	}
}
