package etcd_test

import (
	"testing"

	"github.com/baton-go/baton/internal/testenv"
	"github.com/baton-go/baton/lockprovider"
	"github.com/baton-go/baton/lockprovider/etcd"
	"github.com/baton-go/baton/lockprovider/lockprovidertest"
)

// The conformance suite times leases of 50 ms and expects them to lapse on
// time, which only ClockExpiry gives on etcd (its leases have whole-second
// TTLs). TestSubSecond checks the default mode's behaviour instead.
func TestConformance(t *testing.T) {
	c := testenv.StartEtcdCluster(t, 3)
	cli := client(t, c)
	lockprovidertest.Run(t, func(t *testing.T) lockprovider.Provider {
		return newProvider(t, cli, etcd.Config{ClockExpiry: true})
	})
}
