package redis_test

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/baton-go/baton/internal/testenv"
	"github.com/baton-go/baton/internal/testenv/redisenv"
	"github.com/baton-go/baton/lockprovider"
)

// roundTrips counts what a go-redis client sends: single commands and
// pipelines, each one round trip (per node).
type roundTrips struct {
	cmds, pipes atomic.Int64
	names       atomic.Value // []string of the last single command
}

func (r *roundTrips) DialHook(next goredis.DialHook) goredis.DialHook { return next }
func (r *roundTrips) ProcessHook(next goredis.ProcessHook) goredis.ProcessHook {
	return func(ctx context.Context, cmd goredis.Cmder) error {
		r.cmds.Add(1)
		r.names.Store(cmd.Name())
		return next(ctx, cmd)
	}
}
func (r *roundTrips) ProcessPipelineHook(next goredis.ProcessPipelineHook) goredis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []goredis.Cmder) error {
		r.pipes.Add(1)
		return next(ctx, cmds)
	}
}

func batchOf(prefix string, n int, tick time.Time) []lockprovider.AcquireParams {
	ps := make([]lockprovider.AcquireParams, n)
	for i := range ps {
		ps[i] = lockprovider.AcquireParams{Name: fmt.Sprintf("%s-%d", prefix, i), Owner: lockprovider.NewOwner(),
			LockedBy: "test", AtMostFor: time.Minute, Tick: tick}
	}
	return ps
}

// A batch of MaxBatch names is one EVALSHA on a single node, and one
// pipeline on a Cluster; the ledger's batch too.
func TestBatchRoundTrips(t *testing.T) {
	t.Parallel()
	single := redisenv.Client(t)
	cluster := redisenv.Cluster(t, testenv.StartRedisCluster(t, 3))
	for _, c := range []struct {
		name      string
		client    interface{ AddHook(goredis.Hook) }
		wantPipes int64
	}{{"Single", single, 0}, {"Cluster", cluster, 1}} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			rt := &roundTrips{}
			c.client.AddHook(rt)
			p, _ := newProvider(t, c.client.(interface {
				goredis.Scripter
				SSubscribe(context.Context, ...string) *goredis.PubSub
				Scan(context.Context, uint64, string, int64) *goredis.ScanCmd
			}))
			tick := time.Now().Truncate(time.Second)
			for round, run := range []*lockprovider.RunStart{nil, nil, {}} {
				ps := batchOf(fmt.Sprintf("rt-%d", round), lockprovider.MaxBatch, tick)
				cmds, pipes := rt.cmds.Load(), rt.pipes.Load()
				var res []lockprovider.BatchResult
				var err error
				if run == nil {
					res, err = p.AcquireBatch(t.Context(), ps)
				} else {
					res, err = p.AcquireRunBatch(t.Context(), ps, *run)
				}
				if err != nil {
					t.Fatal(err)
				}
				for i, r := range res {
					if r.Err != nil || r.Lease.Token == 0 {
						t.Fatalf("round %d item %d: %+v", round, i, r)
					}
				}
				if round == 0 {
					continue // the first call may load the script
				}
				gotCmds, gotPipes := rt.cmds.Load()-cmds, rt.pipes.Load()-pipes
				if c.wantPipes == 0 && (gotCmds != 1 || gotPipes != 0 || !strings.EqualFold(rt.names.Load().(string), "evalsha")) {
					t.Errorf("round %d: %d commands (last %v) and %d pipelines, want one EVALSHA", round, gotCmds, rt.names.Load(), gotPipes)
				}
				if c.wantPipes > 0 && (gotPipes != c.wantPipes || gotCmds != 0) {
					t.Errorf("round %d: %d commands and %d pipelines, want %d pipeline", round, gotCmds, gotPipes, c.wantPipes)
				}
			}
		})
	}
}
