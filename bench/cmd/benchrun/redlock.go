package main

import (
	"context"
	"fmt"
	"os/exec"
	"strconv"
	"time"

	"github.com/go-redsync/redsync/v4"
	redsyncredis "github.com/go-redsync/redsync/v4/redis"
	redsyncgoredis "github.com/go-redsync/redsync/v4/redis/goredis/v9"
	goredis "github.com/redis/go-redis/v9"

	"github.com/baton-go/baton/lockprovider/redlock"
)

// redlockSizes are the numbers of masters compared; the larger set of
// servers is started once and the smaller uses its first masters.
var redlockSizes = []int{3, 5}

// redlockMasters starts n private redis-servers from bin (or from
// redis-server on the PATH when bin is empty) and returns a client of
// each, set up as package redlock asks of its masters. stop closes the
// clients and ends the servers.
func redlockMasters(ctx context.Context, bin string, n, poolSize int) (clients []*goredis.Client, stop func(), err error) {
	if bin == "" {
		if bin, err = exec.LookPath("redis-server"); err != nil {
			return nil, nil, fmt.Errorf("the redlock comparison starts its own Redis masters: %w (give -redis-server, or leave redlock out of -only)", err)
		}
	}
	var stops []func()
	stop = func() {
		for _, c := range clients {
			_ = c.Close()
		}
		for _, s := range stops {
			s()
		}
	}
	for range n {
		url, s, err := privateRedis(ctx, bin)
		if err != nil {
			stop()
			return nil, nil, err
		}
		stops = append(stops, s)
		opt, err := goredis.ParseURL(url)
		if err != nil {
			stop()
			return nil, nil, err
		}
		opt.PoolSize = poolSize
		opt.ContextTimeoutEnabled = true
		opt.DialerRetries = 1
		opt.MaxRetries = -1
		clients = append(clients, goredis.NewClient(opt))
	}
	return clients, stop, nil
}

// redlockComparison sets baton's Redlock provider beside go-redsync on
// the same masters, for each of redlockSizes: masters must hold at least
// the largest size.
func redlockComparison(e *env, masters []*goredis.Client) (comparison, error) {
	c := comparison{
		id:    "redlock",
		title: "Redlock (N=3, 5) vs go-redsync",
		note: "Acquire + release of a name of each goroutine's own (uncontended) over N independent private " +
			"redis-servers, both libraries on the same masters and clients. baton's acquire is two parallel rounds " +
			"to the masters (the lease, then the fencing token on a majority) and its release one; redsync's " +
			"lock is one round (`SET NX PX`) and its unlock one, with no fencing token.",
		concs: e.concs,
	}
	for _, n := range redlockSizes {
		if n > len(masters) {
			return comparison{}, fmt.Errorf("redlock comparison: %d masters, need %d", len(masters), n)
		}
		ms := masters[:n]
		p, err := redlock.New(ms, &redlock.Config{Prefix: e.prefix + "redlock" + strconv.Itoa(n) + ":", RecordTTL: time.Hour})
		if err != nil {
			return comparison{}, err
		}
		pools := make([]redsyncredis.Pool, n)
		for i, m := range ms {
			pools[i] = redsyncgoredis.NewPool(m)
		}
		rs := redsync.New(pools...)
		rsPrefix := e.prefix + "redsync" + strconv.Itoa(n) + ":"
		ours, other := fmt.Sprintf("baton redlock N=%d", n), fmt.Sprintf("redsync N=%d", n)
		c.contenders = append(c.contenders, contender{ours, providerCycle(p)}, contender{other, redsyncCycle(rs, rsPrefix)})
		c.ratios = append(c.ratios, ratio{num: ours, den: other})
	}
	return c, nil
}
