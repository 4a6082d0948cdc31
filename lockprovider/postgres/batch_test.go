package postgres_test

import (
	"testing"

	"github.com/baton-go/baton/lockprovider"
	"github.com/baton-go/baton/lockprovider/lockprovidertest"
)

func TestBatch(t *testing.T) {
	lockprovidertest.RunBatch(t, func(t *testing.T) lockprovider.Provider {
		p, _ := newProvider(t, nil)
		return p
	})
}
