package redis_test

import (
	"testing"

	"github.com/baton-go/baton/internal/testenv"
	"github.com/baton-go/baton/internal/testenv/redisenv"
	"github.com/baton-go/baton/lockprovider"
	"github.com/baton-go/baton/lockprovider/lockprovidertest"
)

// The operator capabilities' suites on the shared Redis; every key they
// leave behind must expire.
func TestOps(t *testing.T) {
	t.Parallel()
	tr := &tracked{c: redisenv.Client(t)}
	newP := func(t *testing.T) lockprovider.Provider { return tr.provider(t) }
	t.Run("Admin", func(t *testing.T) { lockprovidertest.RunAdmin(t, newP) })
	t.Run("Ledger", func(t *testing.T) { lockprovidertest.RunLedger(t, newP) })
	t.Run("Registry", func(t *testing.T) { lockprovidertest.RunRegistry(t, newP) })
	if !t.Failed() {
		tr.checkTTLs(t)
	}
}

// The operator capabilities on a three-master Redis Cluster: every script
// touches one slot (a CROSSSLOT error would fail the suites), and
// ResetRate and ListRates scan every master.
func TestOpsCluster(t *testing.T) {
	t.Parallel()
	cluster := testenv.StartRedisCluster(t, 3)
	tr := &tracked{c: redisenv.Cluster(t, cluster)}
	newP := func(t *testing.T) lockprovider.Provider { return tr.provider(t) }
	t.Run("Admin", func(t *testing.T) { lockprovidertest.RunAdmin(t, newP) })
	t.Run("Ledger", func(t *testing.T) { lockprovidertest.RunLedger(t, newP) })
	t.Run("Registry", func(t *testing.T) { lockprovidertest.RunRegistry(t, newP) })
	if !t.Failed() {
		tr.checkTTLs(t)
	}
}
