package shedlock_test

import (
	"context"
	"crypto/rand"
	"fmt"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/baton-go/baton/batontype"
	"github.com/baton-go/baton/internal/testenv"
	"github.com/baton-go/baton/internal/testenv/redisenv"
	"github.com/baton-go/baton/lockprovider"
	"github.com/baton-go/baton/lockprovider/lockprovidertest"
	"github.com/baton-go/baton/lockprovider/lockprovidertest/history"
	redisprovider "github.com/baton-go/baton/lockprovider/redis"
	"github.com/baton-go/baton/lockprovider/shedlock"
)

// newRedis returns a provider whose keys no other test uses.
func newRedis(t testing.TB, c shedlock.RedisClient) *shedlock.Redis {
	t.Helper()
	p, err := shedlock.NewRedis(c, &shedlock.RedisConfig{KeyPrefix: "job-lock-" + testenv.Unique(), PollInterval: 20 * time.Millisecond})
	if err != nil {
		t.Fatalf("NewRedis: %v", err)
	}
	return p
}

func TestRedisConformance(t *testing.T) {
	t.Parallel()
	c := redisenv.Client(t)
	lockprovidertest.Run(t, func(t *testing.T) lockprovider.Provider { return newRedis(t, c) }, lockprovidertest.WithHistory(history.Config{TickAfterGrant: true}))
}

// javaRedis replays ShedLock's Redis providers (InternalRedisLockProvider,
// behind RedisLockProvider, JedisLockProvider and LettuceLockProvider) as
// of ShedLock 7.9.0 (tag shedlock-parent-7.9.0, unchanged at commit
// 2495b14), in their default mode (safeUpdate false).
type javaRedis struct {
	c      *goredis.Client
	prefix string // keyPrefix:environment
	host   string
	values map[string]string // the value of each held lock
}

// lock: ShedLock 7.9.0 InternalRedisLockProvider.lock -> createLock:
// SET <keyPrefix>:<env>:<name> "ADDED:<ISO time>@<hostname>:<UUID>" NX PX
// <lockAtMostUntil - now in ms>.
func (j *javaRedis) lock(ctx context.Context, name string, atMostFor time.Duration) (time.Time, bool, error) {
	createdAt := time.Now().Truncate(time.Millisecond)
	value := fmt.Sprintf("ADDED:%s@%s:%s", createdAt.UTC().Format("2006-01-02T15:04:05.000Z"), j.host, rand.Text())
	px := time.Until(createdAt.Add(atMostFor)).Milliseconds()
	err := j.c.Do(ctx, "SET", j.prefix+":"+name, value, "NX", "PX", px).Err()
	if err == goredis.Nil {
		return time.Time{}, false, nil
	}
	if err != nil {
		return time.Time{}, false, err
	}
	j.values[name] = value
	return createdAt, true, nil
}

// unlock: ShedLock 7.9.0 RedisLock.doUnlock: keepLockFor = lockAtLeastUntil
// - now; if it is <= 0, DEL <key>; otherwise SET <key> <value> XX PX
// <keepLockFor>.
func (j *javaRedis) unlock(ctx context.Context, name string, createdAt time.Time, atLeastFor time.Duration) error {
	key := j.prefix + ":" + name
	keep := createdAt.Add(atLeastFor).Sub(time.Now().Truncate(time.Millisecond)).Milliseconds()
	if keep <= 0 {
		return j.c.Do(ctx, "DEL", key).Err()
	}
	err := j.c.Do(ctx, "SET", key, j.values[name], "XX", "PX", keep).Err()
	if err == goredis.Nil {
		err = nil
	}
	return err
}

// Two baton replicas and a replayed ShedLock replica share one job on
// ShedLock's Redis key.
func TestRedisInterleavedWithJava(t *testing.T) {
	t.Parallel()
	c := redisenv.Client(t)
	env := "env-" + testenv.Unique()
	var ps [2]lockprovider.Provider
	for i := range ps {
		p, err := shedlock.NewRedis(c, &shedlock.RedisConfig{Environment: env})
		if err != nil {
			t.Fatal(err)
		}
		ps[i] = p
	}
	java := &javaRedis{c: c, prefix: shedlock.DefaultKeyPrefix + ":" + env, host: "java-host", values: map[string]string{}}
	interleave(t, "report", java, ps)
}

// atLeastHold is the lockAtLeastFor of the format tests: the checks that
// a name stays taken inside it (a few round trips after the grant) must
// fit in it on a busy machine, so it is far above their time.
const atLeastHold = 2 * time.Second

// A Go grant is stored in ShedLock's format, a Java grant refuses a Go
// replica and is reported by Inspect, and Go's release honours
// lockAtLeastFor by keeping the key until then, as ShedLock's unlock does.
func TestRedisShedLockFormat(t *testing.T) {
	t.Parallel()
	c := redisenv.Client(t)
	ctx := t.Context()
	env := "env-" + testenv.Unique()
	p, err := shedlock.NewRedis(c, &shedlock.RedisConfig{Environment: env, LockedBy: "go-host"})
	if err != nil {
		t.Fatal(err)
	}
	key := "job-lock:" + env + ":nightly"
	if got := p.Key("nightly"); got != key {
		t.Fatalf("Key = %q, want %q", got, key)
	}
	owner := lockprovider.NewOwner()
	l, err := p.Acquire(ctx, lockprovider.AcquireParams{Name: "nightly", Owner: owner, AtMostFor: time.Minute, AtLeastFor: atLeastHold})
	if err != nil {
		t.Fatal(err)
	}
	v, err := c.Get(ctx, key).Result()
	if err != nil {
		t.Fatal(err)
	}
	want := "ADDED:" + l.GrantedAt.UTC().Format("2006-01-02T15:04:05.000Z") + "@go-host:" + owner
	if v != want {
		t.Errorf("value %q, want %q", v, want)
	}
	if pttl := c.PTTL(ctx, key).Val(); pttl <= 50*time.Second || pttl > time.Minute {
		t.Errorf("PTTL %v, want about a minute", pttl)
	}
	java := &javaRedis{c: c, prefix: "job-lock:" + env, host: "java-host", values: map[string]string{}}
	if _, ok, err := java.lock(ctx, "nightly", time.Minute); err != nil || ok {
		t.Fatalf("java lock of a Go-held name: %v %v, want refused", ok, err)
	}
	if err := p.Release(ctx, lockprovider.ReleaseParams{Name: "nightly", Owner: owner}); err != nil {
		t.Fatal(err)
	}
	if pttl := c.PTTL(ctx, key).Val(); pttl <= 0 || pttl > atLeastHold {
		t.Errorf("PTTL after a release inside lockAtLeastFor: %v, want the rest of %v", pttl, atLeastHold)
	}
	if _, ok, err := java.lock(ctx, "nightly", time.Minute); err != nil || ok {
		t.Fatalf("java lock inside Go's lockAtLeastFor: %v %v, want refused", ok, err)
	}
	time.Sleep(atLeastHold + 50*time.Millisecond) // Go's lockAtLeastFor passes
	created, ok, err := java.lock(ctx, "nightly", time.Minute)
	if err != nil || !ok {
		t.Fatalf("java lock after Go's lockAtLeastFor: %v %v", ok, err)
	}
	_, err = p.Acquire(ctx, lockprovider.AcquireParams{Name: "nightly", Owner: lockprovider.NewOwner(), AtMostFor: time.Minute})
	if err != batontype.ErrNotAcquired {
		t.Fatalf("Acquire of a Java-held name: %v, want ErrNotAcquired", err)
	}
	info, err := p.Inspect(ctx, "nightly")
	if err != nil {
		t.Fatal(err)
	}
	if !info.Held || info.LockedBy != "java-host" || !info.GrantedAt.Equal(created) || info.Token != l.Token {
		t.Errorf("Inspect of a Java grant = %+v, want held by java-host since %v, last Go token %d", info, created, l.Token)
	}
	// A stale Go owner cannot release the Java lock.
	if err := p.Release(ctx, lockprovider.ReleaseParams{Name: "nightly", Owner: owner}); err != batontype.ErrNotHeld {
		t.Errorf("stale Release of a Java-held name: %v, want ErrNotHeld", err)
	}
	if err := java.unlock(ctx, "nightly", created, 0); err != nil {
		t.Fatal(err)
	}
	l2, err := p.Acquire(ctx, lockprovider.AcquireParams{Name: "nightly", Owner: lockprovider.NewOwner(), AtMostFor: time.Minute})
	if err != nil {
		t.Fatalf("Acquire after the Java unlock: %v", err)
	}
	if l2.Token <= l.Token {
		t.Errorf("token %d after a Java grant, not above %d", l2.Token, l.Token)
	}
}

// On Redis Cluster, ShedLock's key and baton's hash share a slot, for
// every kind of name.
func TestRedisClusterConformance(t *testing.T) {
	t.Parallel()
	cl := testenv.StartRedisCluster(t, 3)
	c := redisenv.Cluster(t, cl)
	lockprovidertest.Run(t, func(t *testing.T) lockprovider.Provider { return newRedis(t, c) }, lockprovidertest.WithHistory(history.Config{TickAfterGrant: true}))
}

// A Go replica that finds a Java grant remembers its time, so a Go replica
// firing late for a tick the Java replica served is refused even after the
// Java replica deleted its key.
func TestRedisRemembersJavaGrantsForTicks(t *testing.T) {
	t.Parallel()
	c := redisenv.Client(t)
	ctx := t.Context()
	env := "env-" + testenv.Unique()
	p, err := shedlock.NewRedis(c, &shedlock.RedisConfig{Environment: env})
	if err != nil {
		t.Fatal(err)
	}
	java := &javaRedis{c: c, prefix: "job-lock:" + env, host: "java-host", values: map[string]string{}}
	tick := time.Now().Truncate(time.Second)
	created, ok, err := java.lock(ctx, "job", time.Minute)
	if err != nil || !ok {
		t.Fatalf("java lock: %v %v", ok, err)
	}
	// A Go replica on time finds the Java grant.
	_, err = p.Acquire(ctx, lockprovider.AcquireParams{Name: "job", Owner: lockprovider.NewOwner(), AtMostFor: time.Minute, Tick: tick})
	if err != batontype.ErrNotAcquired {
		t.Fatalf("Acquire while Java holds: %v, want ErrNotAcquired", err)
	}
	if err := java.unlock(ctx, "job", created, 0); err != nil {
		t.Fatal(err)
	}
	// A late Go replica for the same tick: served already.
	_, err = p.Acquire(ctx, lockprovider.AcquireParams{Name: "job", Owner: lockprovider.NewOwner(), AtMostFor: time.Minute, Tick: tick})
	if err != batontype.ErrStaleTick {
		t.Errorf("late Acquire for a tick Java served: %v, want ErrStaleTick", err)
	}
	// The next tick is granted.
	if _, err := p.Acquire(ctx, lockprovider.AcquireParams{Name: "job", Owner: lockprovider.NewOwner(), AtMostFor: time.Minute, Tick: created.Add(time.Second)}); err != nil {
		t.Errorf("Acquire for the next tick: %v", err)
	}
}

// Switching between ShedLock's keys and the native Redis provider keeps
// tokens increasing, both ways, without any step when the native fencing
// counter does not exist yet (the documented switch deletes stale ones).
func TestRedisSwitchToNativeKeepsTokensIncreasing(t *testing.T) {
	t.Parallel()
	c := redisenv.Client(t)
	ctx := t.Context()
	compat := newRedis(t, c)
	native, err := redisprovider.New(c, &redisprovider.Config{Prefix: testenv.Prefix(t)})
	if err != nil {
		t.Fatal(err)
	}
	cycle := func(p lockprovider.Provider) int64 {
		t.Helper()
		owner := lockprovider.NewOwner()
		l, err := p.Acquire(ctx, lockprovider.AcquireParams{Name: "job", Owner: owner, AtMostFor: time.Minute})
		if err != nil {
			t.Fatalf("%T: Acquire: %v", p, err)
		}
		if err := p.Release(ctx, lockprovider.ReleaseParams{Name: "job", Owner: owner}); err != nil {
			t.Fatal(err)
		}
		return l.Token
	}
	last := int64(0)
	for i, p := range []lockprovider.Provider{compat, compat, native, native, compat, compat} {
		tok := cycle(p)
		if tok <= last {
			t.Errorf("grant %d (%T): token %d not above %d", i, p, tok, last)
		}
		last = tok
	}
}
