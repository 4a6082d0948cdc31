package robusttest

import (
	"strconv"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/baton-go/baton/internal/robust"
	"github.com/baton-go/baton/internal/testenv"
	"github.com/baton-go/baton/lockprovider/etcd"
	"github.com/baton-go/baton/lockprovider/lockprovidertest/faultproxy"
	"github.com/baton-go/baton/lockprovider/lockprovidertest/history"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// etcd, three members each behind a proxy (the client knows only the
// proxies), killed and restarted at times. The workload's leases are
// shorter than a second, which only ClockExpiry lets lapse on time.
func TestRobustEtcd(t *testing.T) {
	robust.Enabled(t)
	c := testenv.StartEtcdCluster(t, 3)
	var pxs []*faultproxy.Proxy
	var servers []robust.Server
	var eps []string
	for _, m := range c.Members {
		px := faultproxy.New(t, "127.0.0.1:"+strconv.Itoa(m.ClientPort))
		pxs, servers, eps = append(pxs, px), append(servers, m), append(eps, "http://"+px.Addr())
	}
	cli, err := clientv3.New(clientv3.Config{Endpoints: eps, DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cli.Close() })
	p, err := etcd.New(cli, &etcd.Config{Prefix: "robust" + testenv.Unique() + "/", ClockExpiry: true})
	if err != nil {
		t.Fatal(err)
	}
	robust.Run(t, robust.Target{Name: "etcd", Proxies: pxs, Servers: servers, Provider: p,
		Config: history.Config{ClientGrantTime: true}})
}
