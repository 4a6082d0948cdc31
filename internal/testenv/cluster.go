package testenv

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"
)

// RedisCluster is a private Redis Cluster of masters without replicas, each
// a redis-server process on loopback ports.
type RedisCluster struct {
	Nodes    []*RedisServer
	busPorts []int
}

// StartRedisCluster starts masters redis-server processes in cluster mode,
// splits the 16384 slots evenly between them, joins them and waits until
// every node reports cluster_state:ok and knows every other node. The
// servers stop when the test ends.
func StartRedisCluster(t testing.TB, masters int) *RedisCluster {
	t.Helper()
	if masters < 1 {
		t.Fatalf("testenv: cluster needs at least one master, got %d", masters)
	}
	c := &RedisCluster{}
	for range masters {
		var bus int
		n := startRedis(t, func() []string {
			// The bus port defaults to port+10000, which may be taken or
			// out of range.
			bus = FreePort(t)
			return []string{
				"--cluster-enabled", "yes",
				"--cluster-port", strconv.Itoa(bus),
				"--cluster-node-timeout", "5000",
				"--cluster-require-full-coverage", "yes",
			}
		})
		t.Cleanup(n.Kill)
		c.busPorts = append(c.busPorts, bus)
		c.Nodes = append(c.Nodes, n)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := c.form(ctx); err != nil {
		t.Fatalf("testenv: form redis cluster: %v", err)
	}
	return c
}

func (c *RedisCluster) form(ctx context.Context) error {
	per := 16384 / len(c.Nodes)
	for i, n := range c.Nodes {
		lo, hi := i*per, (i+1)*per-1
		if i == len(c.Nodes)-1 {
			hi = 16383
		}
		if _, err := redisDo(ctx, n.Addr(), "CLUSTER", "ADDSLOTSRANGE", lo, hi); err != nil {
			return fmt.Errorf("%s: ADDSLOTSRANGE %d %d: %w", n.Addr(), lo, hi, err)
		}
	}
	for i, n := range c.Nodes[1:] {
		if _, err := redisDo(ctx, c.Nodes[0].Addr(), "CLUSTER", "MEET", "127.0.0.1", n.Port, c.busPorts[i+1]); err != nil {
			return fmt.Errorf("MEET %s: %w", n.Addr(), err)
		}
	}
	for {
		ready := true
		for _, n := range c.Nodes {
			info, err := redisString(ctx, n.Addr(), "CLUSTER", "INFO")
			if err != nil {
				return err
			}
			if !strings.Contains(info, "cluster_state:ok") ||
				!strings.Contains(info, "cluster_known_nodes:"+strconv.Itoa(len(c.Nodes))+"\r\n") {
				ready = false
				break
			}
		}
		if ready {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("cluster not ok: %w", ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// Addrs are the host:port of every node.
func (c *RedisCluster) Addrs() []string {
	out := make([]string, len(c.Nodes))
	for i, n := range c.Nodes {
		out[i] = n.Addr()
	}
	return out
}
