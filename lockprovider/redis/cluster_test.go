package redis_test

import (
	"testing"
	"time"

	"github.com/baton-go/baton/internal/testenv"
	"github.com/baton-go/baton/internal/testenv/redisenv"
	"github.com/baton-go/baton/lockprovider"
	"github.com/baton-go/baton/lockprovider/lockprovidertest"
)

// The provider on a real three-master Redis Cluster: the conformance
// suite with every capability (a batch is one script call per hash slot
// in one pipeline; the control keys and channel share one slot; ResetRate
// and ListRates scan every master), release notifications across slots,
// List over every master, and TTLs on every key. A CROSSSLOT error would
// fail any of them.
func TestCluster(t *testing.T) {
	t.Parallel()
	cluster := testenv.StartRedisCluster(t, 3)
	c := redisenv.Cluster(t, cluster)
	tr := &tracked{c: c}
	t.Run("group", func(t *testing.T) {
		t.Run("suite", func(t *testing.T) {
			t.Parallel()
			lockprovidertest.Run(t, func(t *testing.T) lockprovider.Provider { return tr.provider(t) })
		})
		t.Run("notify", func(t *testing.T) {
			t.Parallel()
			p := tr.provider(t)
			testNotify(t, p)
		})
		t.Run("list", func(t *testing.T) {
			t.Parallel()
			p := tr.provider(t)
			ctx := t.Context()
			// Enough names to land on every master.
			want := map[string]bool{}
			for i := range 30 {
				ap := acquireParams("list-" + string(rune('a'+i)))
				ap.Tick = time.Now()
				if _, err := p.Acquire(ctx, ap); err != nil {
					t.Fatal(err)
				}
				want[ap.Name] = true
			}
			infos, err := p.List(ctx)
			if err != nil {
				t.Fatal(err)
			}
			for _, in := range infos {
				if !want[in.Name] || !in.Held || in.LastTick.IsZero() {
					t.Errorf("List: unexpected %+v", in)
				}
				delete(want, in.Name)
			}
			if len(want) > 0 {
				t.Errorf("List lacks %v", want)
			}
		})
	})
	if t.Failed() {
		return
	}
	tr.checkTTLs(t)
}
