package redis_test

import (
	"testing"

	"github.com/baton-go/baton/internal/testenv"
	"github.com/baton-go/baton/lockprovider"
	"github.com/baton-go/baton/lockprovider/lockprovidertest"
)

// The control suite on the shared Redis; every key it leaves behind must
// expire.
func TestControl(t *testing.T) {
	t.Parallel()
	tr := &tracked{c: testenv.Redis(t)}
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
	tr := &tracked{c: cluster.Client(t)}
	newP := func(t *testing.T) lockprovider.Provider { return tr.provider(t) }
	t.Run("Control", func(t *testing.T) { lockprovidertest.RunControl(t, newP) })
	if !t.Failed() {
		tr.checkTTLs(t)
	}
}
