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
// validity (lease - drift - their time; half of it for the first round),
// and otherwise Acquire documents an error matching ErrUnavailable: a
// 50 ms lease leaves the first round about 24 ms, which -race on a busy
// two-core machine overruns. 400 ms leaves it about 195 ms.
const minLease = 400 * time.Millisecond

func TestConformance(t *testing.T) {
	_, clients := masters(t, 5)
	lockprovidertest.Run(t, func(t *testing.T) lockprovider.Provider {
		return newProvider(t, clients, redlock.Config{Timeout: 5 * time.Second})
	}, lockprovidertest.WithHistory(history.Config{ClientGrantTime: true, SplitVotes: true}),
		lockprovidertest.WithMinLease(minLease))
}
