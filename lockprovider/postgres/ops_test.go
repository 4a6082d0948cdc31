package postgres_test

import (
	"testing"

	"github.com/baton-go/baton/lockprovider"
	"github.com/baton-go/baton/lockprovider/lockprovidertest"
)

func TestOps(t *testing.T) {
	newP := func(t *testing.T) lockprovider.Provider {
		p, _ := newProvider(t, nil)
		return p
	}
	t.Run("Admin", func(t *testing.T) { lockprovidertest.RunAdmin(t, newP) })
	t.Run("Ledger", func(t *testing.T) { lockprovidertest.RunLedger(t, newP) })
	t.Run("Registry", func(t *testing.T) { lockprovidertest.RunRegistry(t, newP) })
}
