package redlock_test

import (
	"time"

	"testing"

	"github.com/baton-go/baton/lockprovider"
	"github.com/baton-go/baton/lockprovider/lockprovidertest"
	"github.com/baton-go/baton/lockprovider/lockprovidertest/history"
	"github.com/baton-go/baton/lockprovider/redlock"
)

// minLease is the shortest lease the conformance cases use here. A Redlock
// grant counts only when both rounds reach a majority within the lease's
// validity (lease - drift - their time; each master's call of the first
// round gets half of it), and otherwise Acquire documents an error
// matching ErrUnavailable. Beside a busy loop per core, with -race and
// eight subtests at once on two cores, five local masters took over 50 ms
// to answer a round (3 of 5 runs failed at 50 ms leases) and three of them
// over 195 ms (1 of 5 at 400 ms); 2 s leaves each call about a second.
const minLease = 2 * time.Second

func TestConformance(t *testing.T) {
	_, clients := masters(t, 5)
	lockprovidertest.Run(t, func(t *testing.T) lockprovider.Provider {
		return newProvider(t, clients, redlock.Config{Timeout: 5 * time.Second})
	}, lockprovidertest.WithHistory(history.Config{ClientGrantTime: true, SplitVotes: true}),
		lockprovidertest.WithMinLease(minLease))
}
