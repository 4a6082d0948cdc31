package shedlock

import (
	"testing"

	"github.com/baton-go/baton/lockprovider/postgres"
)

// ExportTokens' default target is the native provider's default table; the
// provider keeps its own copy of the name so that it imports no other
// provider.
func TestDefaultNativeTable(t *testing.T) {
	if defaultNativeTable != postgres.DefaultTable {
		t.Fatalf("defaultNativeTable %q, postgres.DefaultTable %q", defaultNativeTable, postgres.DefaultTable)
	}
}
