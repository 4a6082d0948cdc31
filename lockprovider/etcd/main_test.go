package etcd_test

import (
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/baton-go/baton/batontype"
	"github.com/baton-go/baton/internal/testenv"
	"github.com/baton-go/baton/lockprovider"
	"github.com/baton-go/baton/lockprovider/etcd"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// client returns a client of the cluster, closed when the test ends.
func client(t testing.TB, c *testenv.EtcdCluster) *clientv3.Client {
	t.Helper()
	return clientAt(t, c.Endpoints()...)
}

// clientAt returns a client of the members at endpoints, closed when the
// test ends.
func clientAt(t testing.TB, endpoints ...string) *clientv3.Client {
	t.Helper()
	cli, err := clientv3.New(clientv3.Config{
		Endpoints:   endpoints,
		DialTimeout: 5 * time.Second,
		Logger:      zap.NewNop(),
	})
	if err != nil {
		t.Fatalf("etcd client: %v", err)
	}
	t.Cleanup(func() { _ = cli.Close() })
	return cli
}

// newProvider returns a provider under a prefix of its own.
func newProvider(t testing.TB, cli *clientv3.Client, cfg etcd.Config) *etcd.Provider {
	t.Helper()
	cfg.Prefix = "t" + testenv.Unique() + "/"
	p, err := etcd.New(cli, &cfg)
	if err != nil {
		t.Fatalf("etcd.New: %v", err)
	}
	return p
}

// newProviderPrefix returns a provider under prefix, which several
// providers of one test share (instances of an application).
func newProviderPrefix(t testing.TB, cli *clientv3.Client, prefix string) *etcd.Provider {
	t.Helper()
	p, err := etcd.New(cli, &etcd.Config{Prefix: prefix})
	if err != nil {
		t.Fatalf("etcd.New: %v", err)
	}
	return p
}

func acquire(t testing.TB, p lockprovider.Provider, name string, atMostFor time.Duration) (batontype.Lease, error) {
	t.Helper()
	return p.Acquire(t.Context(), lockprovider.AcquireParams{
		Name: name, Owner: lockprovider.NewOwner(), AtMostFor: atMostFor,
	})
}
