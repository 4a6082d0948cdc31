package shedlock_test

import (
	"context"
	"testing"
	"time"

	"github.com/baton-go/baton/internal/shedlockfleet"
	"github.com/baton-go/baton/lockprovider"
)

// javaReplica is a replayed ShedLock replica: lock returns the lock
// configuration's createdAt when acquired.
type javaReplica interface {
	lock(ctx context.Context, name string, atMostFor time.Duration) (time.Time, bool, error)
	unlock(ctx context.Context, name string, createdAt time.Time, atLeastFor time.Duration) error
}

// interleave runs the mixed fleet of package shedlockfleet with java as
// the ShedLock replica.
func interleave(t *testing.T, name string, java javaReplica, goProviders [2]lockprovider.Provider) {
	shedlockfleet.Interleave(t, name, java.lock, java.unlock, goProviders)
}
