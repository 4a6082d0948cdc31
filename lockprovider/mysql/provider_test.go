package mysql_test

import (
	"context"
	"testing"

	"github.com/baton-go/baton/internal/testenv/mysqlenv"
	"github.com/baton-go/baton/lockprovider"
	"github.com/baton-go/baton/lockprovider/lockprovidertest"
	"github.com/baton-go/baton/lockprovider/mysql"
)

// newProvider returns a migrated provider on a private database.
func newProvider(t testing.TB, cfg *mysql.Config) (*mysql.Provider, *mysqlenv.MY) {
	t.Helper()
	my := mysqlenv.Database(t)
	p, err := mysql.New(my.DB, cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	if err := p.Migrate(context.Background()); err != nil {
		t.Fatalf("Migrate: %v", err)
	}
	return p, my
}

// The conformance suite, every capability the provider implements, each
// subtest on a migrated provider in a database of its own.
func TestConformance(t *testing.T) {
	lockprovidertest.Run(t, func(t *testing.T) lockprovider.Provider {
		p, _ := newProvider(t, nil)
		return p
	})
}
