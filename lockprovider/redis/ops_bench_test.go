package redis_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/baton-go/baton/batontype"
	"github.com/baton-go/baton/internal/testenv/redisenv"
	"github.com/baton-go/baton/lockprovider"
	"github.com/baton-go/baton/lockprovider/lockprovidertest"
)

// go test -run '^$' -bench Ledger -cpu 2 ./lockprovider/redis/
func BenchmarkLedger(b *testing.B) {
	p, _ := newProvider(b, redisenv.Client(b))
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
	c := redisenv.Client(t)
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
			Run: batontype.RunRecord{Job: "one-rt", Token: l.Token, Tick: l.Tick, Started: l.GrantedAt}, Outcome: batontype.OutcomeSucceeded})
		if err != nil {
			t.Fatal(err)
		}
		if i == 1 && (mid-before != 1 || cnt.n.Load()-mid != 1) {
			t.Errorf("AcquireRun sent %d commands, ReleaseRun %d; want 1 each", mid-before, cnt.n.Load()-mid)
		}
	}
}

// A run list gets its expiry (the retention age and a sixteenth) from the
// claim that creates it, and again when recreated although the client set
// it lately; between, a claim need not set it.
func TestLedgerListExpiry(t *testing.T) {
	c := redisenv.Client(t)
	p, prefix := newProvider(t, c)
	ctx := t.Context()
	ret := batontype.Retention{MaxAge: time.Hour}
	want := ret.MaxAge + ret.MaxAge/16
	claim := func(i int) {
		t.Helper()
		owner := lockprovider.NewOwner()
		l, err := p.AcquireRun(ctx, lockprovider.AcquireParams{Name: "expiry", Owner: owner, AtMostFor: time.Minute,
			Tick: time.UnixMilli(int64(i+1) * 1000)}, lockprovider.RunStart{Retention: ret})
		if err != nil {
			t.Fatal(err)
		}
		err = p.ReleaseRun(ctx, lockprovider.ReleaseParams{Name: "expiry", Owner: owner}, lockprovider.RunEnd{
			Run: batontype.RunRecord{Job: "expiry", Token: l.Token, Tick: l.Tick, Started: l.GrantedAt}, Outcome: batontype.OutcomeSucceeded})
		if err != nil {
			t.Fatal(err)
		}
	}
	list := func() string {
		t.Helper()
		keys, err := c.Keys(ctx, prefix+"*:r").Result()
		if err != nil || len(keys) != 1 {
			t.Fatalf("run lists %v, %v; want one", keys, err)
		}
		return keys[0]
	}
	claim(0)
	key := list()
	if ttl := c.PTTL(ctx, key).Val(); ttl <= ret.MaxAge || ttl > want {
		t.Fatalf("new run list expires in %v, want in (%v, %v]", ttl, ret.MaxAge, want)
	}
	// Shortened by hand: a claim soon after the one that set it leaves it.
	c.PExpire(ctx, key, 2*ret.MaxAge/3)
	claim(1)
	if ttl := c.PTTL(ctx, key).Val(); ttl > 2*ret.MaxAge/3 {
		t.Errorf("a second claim set the expiry again (%v); want it left to the first", ttl)
	}
	// Gone and recreated: the claim sets it although the client set it lately.
	c.Del(ctx, key)
	claim(2)
	if ttl := c.PTTL(ctx, key).Val(); ttl <= ret.MaxAge || ttl > want {
		t.Errorf("recreated run list expires in %v, want in (%v, %v]", ttl, ret.MaxAge, want)
	}
	if runs, err := p.Runs(ctx, batontype.RunQuery{Job: "expiry"}); err != nil || len(runs) != 1 || runs[0].Outcome != batontype.OutcomeSucceeded {
		t.Errorf("runs of the recreated list: %+v, %v; want one, succeeded", runs, err)
	}
}
