package etcd_test

import (
	"fmt"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/baton-go/baton/internal/atleastcheck"
	"github.com/baton-go/baton/internal/testenv"
	"github.com/baton-go/baton/lockprovider/etcd"
)

// An acquire whose round trips are slow (the proxy delays every chunk),
// then an Extend over the same connection, fast again, and an early
// Release: the Extend must keep the bound the acquire set, so another
// owner is granted the name no earlier than GrantedAt + AtLeastFor. The
// other providers run the same check in internal/integration/batontest.
// By default the bound ends when etcd ends its lease, rounded up to whole
// seconds; with ClockExpiry, at its millisecond.
func TestFaultExtendKeepsAtLeastBound(t *testing.T) {
	for _, clock := range []bool{false, true} {
		t.Run(fmt.Sprintf("ClockExpiry=%v", clock), func(t *testing.T) { testExtendKeepsAtLeastBound(t, clock) })
	}
}

func testExtendKeepsAtLeastBound(t *testing.T, clockExpiry bool) {
	const rounding = 2 * time.Millisecond // the bound is kept in milliseconds
	c := testenv.StartEtcdCluster(t, 1)
	proxy, u := testenv.ProxyURL(t, c.Members[0].URL())
	prefix := "t" + testenv.Unique() + "/"
	provider := func(cli *clientv3.Client) *etcd.Provider {
		p, err := etcd.New(cli, &etcd.Config{Prefix: prefix, ClockExpiry: clockExpiry})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	atleastcheck.ExtendKeepsBound(t, provider(clientAt(t, u)), provider(client(t, c)), rounding, proxy)
}
