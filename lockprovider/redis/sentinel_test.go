package redis_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/baton-go/baton/batontype"
	"github.com/baton-go/baton/internal/testenv"
	"github.com/baton-go/baton/internal/testenv/redisenv"
	"github.com/baton-go/baton/lockprovider"
)

// The conformance suite through a Sentinel failover client; afterwards
// every key the suite left behind must have a TTL.
func TestSentinelConformance(t *testing.T) {
	t.Parallel()
	conformance(t, redisenv.Failover(t, testenv.StartRedisSentinel(t)))
}

// A forced failover to an in-sync replica: the failover client follows the
// sentinel to the new master, fencing tokens keep increasing (the counter
// was replicated), and release notifications arrive from the new master,
// both for a waiter registered before the failover and for a new one.
func TestSentinelFailover(t *testing.T) {
	t.Parallel()
	s := testenv.StartRedisSentinel(t)
	c := redisenv.Failover(t, s)
	p, prefix := newProvider(t, c)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	const name = "failover"

	var fences []int64
	for range 3 {
		ap := acquireParams(name)
		l, err := p.Acquire(ctx, ap)
		if err != nil {
			t.Fatalf("Acquire before failover: %v", err)
		}
		fences = append(fences, l.Token)
		if err := p.Release(ctx, lockprovider.ReleaseParams{Name: name, Owner: ap.Owner}); err != nil {
			t.Fatalf("Release before failover: %v", err)
		}
	}
	early := make(chan struct{}, 1)
	stopEarly, err := p.NotifyRelease(ctx, name, early)
	if err != nil {
		t.Fatalf("NotifyRelease before failover: %v", err)
	}
	defer stopEarly()

	// Everything written so far must be on the replica before it is
	// promoted.
	mc := redisenv.Server(t, s.Master)
	if n, err := mc.Do(ctx, "WAIT", 1, 1000).Int64(); err != nil || n != 1 {
		t.Fatalf("WAIT 1 1000 on the master: %d replicas, err %v", n, err)
	}
	sc := goredis.NewSentinelClient(&goredis.Options{Addr: s.Addr})
	defer sc.Close()
	start := time.Now()
	if err := sc.Failover(ctx, s.MasterName).Err(); err != nil {
		t.Fatalf("SENTINEL FAILOVER: %v", err)
	}
	// Wait until the sentinel names the replica as master and the old
	// master has been demoted, so no acquire below can land on it.
	want := strconv.Itoa(s.Replica.Port)
	for {
		addr, err := sc.GetMasterAddrByName(ctx, s.MasterName).Result()
		if err == nil && len(addr) == 2 && addr[1] == want {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("sentinel does not report the replica as master: %v, %v", addr, err)
		}
		time.Sleep(20 * time.Millisecond) // poll interval; ctx bounds the wait
	}
	switched := time.Since(start)
	for {
		role, err := mc.Do(ctx, "ROLE").Slice()
		if err == nil && len(role) > 0 && role[0] == "slave" {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("old master not demoted: %v, %v", role, err)
		}
		time.Sleep(20 * time.Millisecond) // poll interval; ctx bounds the wait
	}
	demoted := time.Since(start)

	// The client may still hold connections to the old master; retry until
	// an acquire succeeds, within the test's bound.
	ap := acquireParams(name)
	var l batontype.Lease
	tries := 0
	for {
		tries++
		if l, err = p.Acquire(ctx, ap); err == nil {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("Acquire after failover: %v (%d tries)", err, tries)
		}
		time.Sleep(50 * time.Millisecond) // retry interval while the failover settles; ctx bounds it
	}
	acquired := time.Since(start)
	t.Logf("failover: sentinel switched after %v, old master demoted after %v, acquire succeeded after %v (%d tries)",
		switched, demoted, acquired, tries)
	for _, f := range fences {
		if l.Token <= f {
			t.Errorf("fence after failover %d, want larger than every earlier fence %v", l.Token, fences)
		}
	}
	// The lease is on the new master.
	if n, err := redisenv.Server(t, s.Replica).Exists(ctx, prefix+"{"+name+"}").Result(); err != nil || n != 1 {
		t.Errorf("lease key on the new master: exists=%d err=%v", n, err)
	}

	late := make(chan struct{}, 1)
	stopLate, err := p.NotifyRelease(ctx, name, late)
	if err != nil {
		t.Fatalf("NotifyRelease after failover: %v", err)
	}
	defer stopLate()
	// The early waiter may have been woken by the reconnect; only a signal
	// after the release counts.
	select {
	case <-early:
	default:
	}
	released := time.Now()
	if err := p.Release(ctx, lockprovider.ReleaseParams{Name: name, Owner: ap.Owner}); err != nil {
		t.Fatalf("Release after failover: %v", err)
	}
	for _, w := range []struct {
		name string
		ch   chan struct{}
	}{{"late", late}, {"early", early}} {
		select {
		case <-w.ch:
			t.Logf("%s waiter signalled %v after the release", w.name, time.Since(released))
		case <-time.After(5 * time.Second):
			t.Errorf("%s waiter not signalled within 5s of a release on the new master", w.name)
		}
	}
}
