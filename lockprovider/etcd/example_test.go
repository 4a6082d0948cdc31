package etcd_test

import (
	"context"
	"fmt"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/baton-go/baton"
	"github.com/baton-go/baton/lockprovider/etcd"
)

// A Locker on etcd. The provider uses the application's client and never
// closes it.
func Example() {
	cli, err := clientv3.New(clientv3.Config{
		Endpoints:   []string{"http://127.0.0.1:2379"},
		DialTimeout: 5 * time.Second,
	})
	if err != nil {
		panic(err)
	}
	defer cli.Close()

	provider, err := etcd.New(cli, nil)
	if err != nil {
		panic(err)
	}
	locker, err := baton.NewLocker(provider, nil)
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	lock, err := locker.TryAcquire(ctx, "nightly-report", &baton.AcquireOptions{AtMostFor: 30 * time.Second})
	if err != nil {
		fmt.Println("not acquired:", err)
		return
	}
	defer lock.Release(ctx)
	fmt.Println("token", lock.Token()) // an etcd revision: pass it to the guarded resource
}
