package postgres_test

import (
	"testing"

	"github.com/baton-go/baton/lockprovider"
	"github.com/baton-go/baton/lockprovider/lockprovidertest"
)

func TestControl(t *testing.T) {
	newP := func(t *testing.T) lockprovider.Provider {
		p, _ := newProvider(t, nil)
		return p
	}
	t.Run("Control", func(t *testing.T) { lockprovidertest.RunControl(t, newP) })
}
