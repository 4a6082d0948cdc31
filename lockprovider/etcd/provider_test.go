package etcd_test

import (
	"testing"
	"time"

	"github.com/baton-go/baton/internal/testenv"
	"github.com/baton-go/baton/lockprovider"
	"github.com/baton-go/baton/lockprovider/etcd"
	"github.com/baton-go/baton/lockprovider/lockprovidertest"
	"github.com/baton-go/baton/lockprovider/lockprovidertest/history"
)

// The conformance suite times leases of 50 ms and expects them to lapse on
// time, which only ClockExpiry gives on etcd (its leases have whole-second
// TTLs). TestSubSecond checks the default mode's behaviour instead.
func TestConformance(t *testing.T) {
	c := testenv.StartEtcdCluster(t, 3)
	cli := client(t, c)
	lockprovidertest.Run(t, func(t *testing.T) lockprovider.Provider {
		return newProvider(t, cli, etcd.Config{ClockExpiry: true})
	}, lockprovidertest.WithHistory(history.Config{ClientGrantTime: true}))
}

// Inspect reports a lease's minimum hold (LeaseInfo.AtLeastUntil) from
// its hold key, and none for a lease without one.
func TestInspectMinHold(t *testing.T) {
	c := testenv.StartEtcdCluster(t, 1)
	p := newProvider(t, client(t, c), etcd.Config{})
	ctx := t.Context()
	l, err := p.Acquire(ctx, lockprovider.AcquireParams{Name: "held", Owner: lockprovider.NewOwner(), AtMostFor: time.Minute, AtLeastFor: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	info, err := p.Inspect(ctx, "held")
	if err != nil {
		t.Fatal(err)
	}
	if d := info.AtLeastUntil.Sub(l.AtLeastUntil).Abs(); l.AtLeastUntil.IsZero() || d > 50*time.Millisecond {
		t.Errorf("AtLeastUntil %v, want the grant's %v", info.AtLeastUntil, l.AtLeastUntil)
	}
	if _, err := acquire(t, p, "plain", time.Minute); err != nil {
		t.Fatal(err)
	}
	if info, err := p.Inspect(ctx, "plain"); err != nil || !info.AtLeastUntil.IsZero() {
		t.Errorf("lease without a minimum hold: AtLeastUntil %v (err %v), want zero", info.AtLeastUntil, err)
	}
}
