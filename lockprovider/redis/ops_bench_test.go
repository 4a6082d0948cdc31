package redis_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/baton-go/baton/internal/testenv"
	"github.com/baton-go/baton/lockprovider"
	"github.com/baton-go/baton/lockprovider/lockprovidertest"
)

// go test -run '^$' -bench Ledger -cpu 2 ./lockprovider/redis/
func BenchmarkLedger(b *testing.B) {
	p, _ := newProvider(b, testenv.Redis(b))
	lockprovidertest.BenchLedger(b, p)
}

// counter counts the commands a client sends, EVALSHA and EVAL alike.
type counter struct{ n atomic.Int64 }

func (c *counter) DialHook(next goredis.DialHook) goredis.DialHook { return next }
func (c *counter) ProcessHook(next goredis.ProcessHook) goredis.ProcessHook {
	return func(ctx context.Context, cmd goredis.Cmder) error { c.n.Add(1); return next(ctx, cmd) }
}
func (c *counter) ProcessPipelineHook(next goredis.ProcessPipelineHook) goredis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []goredis.Cmder) error {
		c.n.Add(int64(len(cmds)))
		return next(ctx, cmds)
	}
}

// The ledger's claim and release are one command each, as the plain ones.
func TestLedgerOneRoundTrip(t *testing.T) {
	c := testenv.Redis(t)
	p, _ := newProvider(t, c)
	cnt := &counter{}
	c.AddHook(cnt)
	ctx := t.Context()
	tick := time.Now().Truncate(time.Second)
	// Warm the script cache so EVALSHA does not fall back to EVAL.
	for i := range 2 {
		owner := lockprovider.NewOwner()
		before := cnt.n.Load()
		l, err := p.AcquireRun(ctx, lockprovider.AcquireParams{Name: "one-rt", Owner: owner, AtMostFor: time.Minute, Tick: tick.Add(time.Duration(i) * time.Second)}, lockprovider.RunStart{})
		if err != nil {
			t.Fatal(err)
		}
		mid := cnt.n.Load()
		err = p.ReleaseRun(ctx, lockprovider.ReleaseParams{Name: "one-rt", Owner: owner}, lockprovider.RunEnd{
			Run: lockprovider.RunRecord{Job: "one-rt", Token: l.Token, Tick: l.Tick, Started: l.GrantedAt}, Outcome: lockprovider.OutcomeSucceeded})
		if err != nil {
			t.Fatal(err)
		}
		if i == 1 && (mid-before != 1 || cnt.n.Load()-mid != 1) {
			t.Errorf("AcquireRun sent %d commands, ReleaseRun %d; want 1 each", mid-before, cnt.n.Load()-mid)
		}
	}
}
