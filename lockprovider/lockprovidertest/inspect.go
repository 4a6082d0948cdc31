package lockprovidertest

import (
	"time"

	"github.com/baton-go/baton/batontype"

	"github.com/baton-go/baton/lockprovider"
)

func inspectCases() []testCase {
	return []testCase{
		{"UnknownName", testInspectUnknown},
		{"Lifecycle", testInspectLifecycle},
		{"List", testInspectList},
	}
}

func (e *env) inspector() lockprovider.Inspector {
	e.t.Helper()
	in, ok := e.p.(lockprovider.Inspector)
	if !ok {
		e.t.Skip("provider does not implement lockprovider.Inspector")
	}
	return in
}

func (e *env) inspect(in lockprovider.Inspector, name string) batontype.LeaseInfo {
	e.t.Helper()
	info, err := in.Inspect(e.ctx, name)
	if err != nil {
		e.t.Fatalf("Inspect(%q): %v", name, err)
	}
	if info.Name != name {
		e.t.Errorf("Inspect(%q).Name = %q", name, info.Name)
	}
	return info
}

// checkInfo compares what Inspect reports for a held lease with the lease.
func (e *env) checkInfo(info batontype.LeaseInfo, l batontype.Lease, lockedBy string, lastTick time.Time, what string) {
	e.t.Helper()
	if !info.Exists || !info.Held {
		e.t.Errorf("%s: Exists %v Held %v, want both true", what, info.Exists, info.Held)
	}
	if info.LockedBy != lockedBy {
		e.t.Errorf("%s: LockedBy %q, want %q", what, info.LockedBy, lockedBy)
	}
	if info.Token != l.Token {
		e.t.Errorf("%s: Token %d, want %d", what, info.Token, l.Token)
	}
	if !nearTime(info.GrantedAt, l.GrantedAt, inspectTol) {
		e.t.Errorf("%s: GrantedAt %v, want %v", what, info.GrantedAt, l.GrantedAt)
	}
	if !nearTime(info.Until, l.Until, inspectTol) {
		e.t.Errorf("%s: Until %v, want %v", what, info.Until, l.Until)
	}
	if !info.LastTick.Equal(lastTick) {
		e.t.Errorf("%s: LastTick %v, want %v", what, info.LastTick, lastTick)
	}
}

// A name never acquired reads as not existing, without an error.
func testInspectUnknown(e *env) {
	in := e.inspector()
	info := e.inspect(in, e.name())
	if info.Exists || info.Held {
		e.t.Errorf("unknown name: Exists %v Held %v, want false", info.Exists, info.Held)
	}
}

// Inspect follows a lease through grant, extend, release and the next
// grant.
func testInspectLifecycle(e *env) {
	in := e.inspector()
	name, owner := e.name(), lockprovider.NewOwner()
	tick := baseTick.Add(42 * time.Second)
	l, err := e.p.Acquire(e.ctx, lockprovider.AcquireParams{
		Name: name, Owner: owner, LockedBy: "host-a", AtMostFor: long, Tick: tick,
	})
	if err != nil {
		e.t.Fatalf("Acquire: %v", err)
	}
	e.checkInfo(e.inspect(in, name), l, "host-a", tick, "held")
	x := e.mustExtend(name, owner, 2*long, 0)
	e.checkInfo(e.inspect(in, name), x, "host-a", tick, "extended")
	e.mustRelease(name, owner)
	info := e.inspect(in, name)
	if info.Held {
		e.t.Errorf("released: Held true")
	}
	if info.Exists && (info.Token != l.Token || !info.LastTick.Equal(tick)) {
		e.t.Errorf("released: Token %d LastTick %v, want the last lease's %d %v", info.Token, info.LastTick, l.Token, tick)
	}
	// A new grant without a tick keeps the newest tick.
	other := lockprovider.NewOwner()
	l2, err := e.p.Acquire(e.ctx, lockprovider.AcquireParams{
		Name: name, Owner: other, LockedBy: "host-b", AtMostFor: long,
	})
	if err != nil {
		e.t.Fatalf("second Acquire: %v", err)
	}
	e.checkInfo(e.inspect(in, name), l2, "host-b", tick, "second grant")
	e.mustRelease(name, other)
}

// List reports the held names of this provider with their leases.
func testInspectList(e *env) {
	in := e.inspector()
	held := map[string]batontype.Lease{}
	for range 3 {
		name := e.name()
		held[name] = e.mustAcquire(name, lockprovider.NewOwner(), long, 0)
	}
	gone, owner := e.name(), lockprovider.NewOwner()
	e.mustAcquire(gone, owner, long, 0)
	e.mustRelease(gone, owner)

	infos, err := in.List(e.ctx)
	if err != nil {
		e.t.Fatalf("List: %v", err)
	}
	seen := map[string]bool{}
	for _, info := range infos {
		if seen[info.Name] {
			e.t.Errorf("List reports %q twice", info.Name)
		}
		seen[info.Name] = true
		if l, ok := held[info.Name]; ok {
			e.checkInfo(info, l, "lockprovidertest", time.Time{}, "List entry "+info.Name)
			continue
		}
		if info.Name != gone {
			e.t.Errorf("List reports %q, which this provider never granted", info.Name)
		} else if info.Held {
			e.t.Errorf("List reports released %q as held", gone)
		}
	}
	for name := range held {
		if !seen[name] {
			e.t.Errorf("List misses held %q", name)
		}
	}
}
