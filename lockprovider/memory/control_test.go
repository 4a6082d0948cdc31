package memory_test

import (
	"testing"

	"github.com/baton-go/baton/lockprovider"
	"github.com/baton-go/baton/lockprovider/lockprovidertest"
	"github.com/baton-go/baton/lockprovider/memory"
)

func TestControl(t *testing.T) {
	lockprovidertest.RunControl(t, func(t *testing.T) lockprovider.Provider { return memory.New(nil) })
}
