package redis_test

import (
	"testing"

	"github.com/baton-go/baton/internal/testenv"
	"github.com/baton-go/baton/internal/testenv/redisenv"
	"github.com/baton-go/baton/lockprovider"
	"github.com/baton-go/baton/lockprovider/lockprovidertest"
)

// The control suite on the shared Redis; every key it leaves behind must
// expire.
func TestControl(t *testing.T) {
	t.Parallel()
	tr := &tracked{c: redisenv.Client(t)}
	newP := func(t *testing.T) lockprovider.Provider { return tr.provider(t) }
	t.Run("Control", func(t *testing.T) { lockprovidertest.RunControl(t, newP) })
	if !t.Failed() {
		tr.checkTTLs(t)
	}
}

// The control suite on a three-master Redis Cluster: the control keys and
// channel share one slot, so no script fails with CROSSSLOT and the
// announcements reach the watchers.
func TestControlCluster(t *testing.T) {
	t.Parallel()
	cluster := testenv.StartRedisCluster(t, 3)
	tr := &tracked{c: redisenv.Cluster(t, cluster)}
	newP := func(t *testing.T) lockprovider.Provider { return tr.provider(t) }
	t.Run("Control", func(t *testing.T) { lockprovidertest.RunControl(t, newP) })
	if !t.Failed() {
		tr.checkTTLs(t)
	}
}

// Every Control operation is one command (the script cache warmed first).
func TestControlOneRoundTrip(t *testing.T) {
	c := redisenv.Client(t)
	p, _ := newProvider(t, c)
	cnt := &counter{}
	c.AddHook(cnt)
	ctx := t.Context()
	if _, err := p.ControlState(ctx); err != nil { // loads the script
		t.Fatal(err)
	}
	one := func(what string, f func() error) {
		t.Helper()
		before := cnt.n.Load()
		if err := f(); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if n := cnt.n.Load() - before; n != 1 {
			t.Errorf("%s sent %d commands, want 1", what, n)
		}
	}
	var r lockprovider.RunRequest
	one("SetPaused", func() error { return p.SetPaused(ctx, "job", true) })
	one("RequestRun", func() (err error) { r, err = p.RequestRun(ctx, lockprovider.RunRequest{Job: "job"}); return err })
	one("ControlState", func() error { _, err := p.ControlState(ctx); return err })
	one("ClaimRun", func() error { _, err := p.ClaimRun(ctx, r.ID); return err })
}
