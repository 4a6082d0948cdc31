package redis_test

import (
	"strconv"
	"testing"
	"time"

	"github.com/baton-go/baton/internal/testenv/redisenv"
	"github.com/baton-go/baton/lockprovider"
)

// A failover to a lagging replica leaves the fencing counter behind (or
// without it): the next grant must still carry a larger token than every
// earlier one. The regression is simulated on the counter key itself, for
// plain and tick acquires: set back to a low value, deleted, and set ahead
// of the server clock (a clock stepped back), where the counter must win.
func TestTokenSurvivesCounterRegression(t *testing.T) {
	t.Parallel()
	c := redisenv.Client(t)
	p, prefix := newProvider(t, c)
	ctx := t.Context()
	const name = "regress"
	counter := prefix + "{" + name + "}:f"
	var last int64
	tick := time.Now().Truncate(time.Second)
	grant := func(what string, ticked bool) {
		t.Helper()
		ap := acquireParams(name)
		if ticked {
			tick = tick.Add(time.Second)
			ap.Tick = tick
		}
		l, err := p.Acquire(ctx, ap)
		if err != nil {
			t.Fatalf("%s: Acquire: %v", what, err)
		}
		if l.Token <= last {
			t.Fatalf("%s: token %d, want > %d", what, l.Token, last)
		}
		last = l.Token
		if err := p.Release(ctx, lockprovider.ReleaseParams{Name: name, Owner: ap.Owner}); err != nil {
			t.Fatalf("%s: Release: %v", what, err)
		}
		// The counter holds the token just granted, and it expires.
		if v, err := c.Get(ctx, counter).Int64(); err != nil || v != l.Token {
			t.Fatalf("%s: counter %d (err %v), want %d", what, v, err, l.Token)
		}
		if ttl, err := c.PTTL(ctx, counter).Result(); err != nil || ttl <= 0 {
			t.Fatalf("%s: counter TTL %v (err %v), want one", what, ttl, err)
		}
	}
	for _, ticked := range []bool{false, true} {
		grant("first grant", ticked)
		if err := c.Set(ctx, counter, 1, time.Hour).Err(); err != nil {
			t.Fatal(err)
		}
		grant("counter set back to 1", ticked)
		if err := c.Del(ctx, counter).Err(); err != nil {
			t.Fatal(err)
		}
		grant("counter deleted", ticked)
	}
	// Ahead of the server's clock in µs (as after the clock stepped back):
	// the counter wins, by one.
	ahead := last + 3_600_000_000
	if err := c.Set(ctx, counter, strconv.FormatInt(ahead, 10), time.Hour).Err(); err != nil {
		t.Fatal(err)
	}
	for _, ticked := range []bool{false, true} {
		grant("counter ahead of the clock", ticked)
		if last != ahead+1 {
			t.Fatalf("counter ahead of the clock: token %d, want %d", last, ahead+1)
		}
		ahead++
	}
}
