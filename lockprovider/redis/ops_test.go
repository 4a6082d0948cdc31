package redis_test

import (
	"testing"

	"github.com/baton-go/baton/internal/testenv"
	"github.com/baton-go/baton/lockprovider"
	"github.com/baton-go/baton/lockprovider/lockprovidertest"
)

// The operator capabilities' suites on the shared Redis; every key they
// leave behind must expire.
func TestOps(t *testing.T) {
	t.Parallel()
	tr := &tracked{c: testenv.Redis(t)}
	newP := func(t *testing.T) lockprovider.Provider { return tr.provider(t) }
	t.Run("Admin", func(t *testing.T) { lockprovidertest.RunAdmin(t, newP) })
	t.Run("Ledger", func(t *testing.T) { lockprovidertest.RunLedger(t, newP) })
	t.Run("Registry", func(t *testing.T) { lockprovidertest.RunRegistry(t, newP) })
	if !t.Failed() {
		tr.checkTTLs(t)
	}
}
