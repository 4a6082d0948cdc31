package etcd_test

import (
	"testing"

	"github.com/baton-go/baton/internal/testenv"
	"github.com/baton-go/baton/lockprovider/etcd"
	"github.com/baton-go/baton/lockprovider/lockprovidertest"
)

// Acquire+Release on a 3-member cluster on loopback: a lease grant and a
// transaction, then a transaction.
func BenchmarkAcquireRelease(b *testing.B) {
	c := testenv.StartEtcdCluster(b, 3)
	lockprovidertest.Bench(b, newProvider(b, client(b, c), etcd.Config{}))
}

// Hand-off: release, the waiter woken by the watch, its acquire.
func BenchmarkHandoff(b *testing.B) {
	c := testenv.StartEtcdCluster(b, 3)
	lockprovidertest.BenchHandoff(b, newProvider(b, client(b, c), etcd.Config{}))
}
