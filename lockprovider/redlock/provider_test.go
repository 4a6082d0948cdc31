package redlock_test

import (
	"time"

	"testing"

	"github.com/baton-go/baton/lockprovider"
	"github.com/baton-go/baton/lockprovider/lockprovidertest"
	"github.com/baton-go/baton/lockprovider/lockprovidertest/history"
	"github.com/baton-go/baton/lockprovider/redlock"
)

func TestConformance(t *testing.T) {
	_, clients := masters(t, 5)
	lockprovidertest.Run(t, func(t *testing.T) lockprovider.Provider {
		return newProvider(t, clients, redlock.Config{Timeout: 5 * time.Second})
	}, lockprovidertest.WithHistory(history.Config{ClientGrantTime: true, SplitVotes: true}))
}
