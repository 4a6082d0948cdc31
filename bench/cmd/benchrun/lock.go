package main

import (
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/bsm/redislock"
	"github.com/go-redsync/redsync/v4"
	redsyncgoredis "github.com/go-redsync/redsync/v4/redis/goredis/v9"
	"github.com/jackc/pgx/v5/pgxpool"
	goredis "github.com/redis/go-redis/v9"

	"github.com/baton-go/baton"
	"github.com/baton-go/baton/lockprovider"
	"github.com/baton-go/baton/lockprovider/postgres"
	redisprovider "github.com/baton-go/baton/lockprovider/redis"
)

const leaseLen = 10 * time.Second

// workerName is the lock name of one goroutine: uncontended, so the
// figures are the cost of a grant and a release.
func workerName(w int) string { return "w" + strconv.Itoa(w) }

var workerNames = func() []string {
	s := make([]string, 256)
	for i := range s {
		s[i] = workerName(i)
	}
	return s
}()

// rawDelete is the compare-and-delete every Redis lock library uses.
var rawDelete = goredis.NewScript(`if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0`)

var errLost = errors.New("not acquired")

// providerCycle is one acquire + release through a provider, on the
// worker's own name.
func providerCycle(p lockprovider.Provider) func(ctx context.Context, w int) error {
	return func(ctx context.Context, w int) error {
		owner := lockprovider.NewOwner()
		name := workerNames[w]
		if _, err := p.Acquire(ctx, lockprovider.AcquireParams{Name: name, Owner: owner, LockedBy: "bench", AtMostFor: leaseLen}); err != nil {
			return err
		}
		return p.Release(ctx, lockprovider.ReleaseParams{Name: name, Owner: owner})
	}
}

// redsyncCycle is one lock + unlock of a redsync mutex (a single try) on
// the worker's own name under prefix.
func redsyncCycle(rs *redsync.Redsync, prefix string) func(ctx context.Context, w int) error {
	return func(ctx context.Context, w int) error {
		m := rs.NewMutex(prefix+workerNames[w], redsync.WithExpiry(leaseLen), redsync.WithTries(1))
		if err := m.LockContext(ctx); err != nil {
			return err
		}
		ok, err := m.UnlockContext(ctx)
		if err == nil && !ok {
			err = errLost
		}
		return err
	}
}

func redisLockComparison(e *env) (comparison, error) {
	p, err := redisprovider.New(e.redis, &redisprovider.Config{Prefix: e.prefix + "baton:", RecordTTL: time.Hour})
	if err != nil {
		return comparison{}, err
	}
	pl, err := redisprovider.New(e.redis, &redisprovider.Config{Prefix: e.prefix + "locker:", RecordTTL: time.Hour})
	if err != nil {
		return comparison{}, err
	}
	lockerOn, err := baton.NewLocker(pl, &baton.Config{LockedBy: "bench", AtMostFor: leaseLen})
	if err != nil {
		return comparison{}, err
	}
	rl := redislock.New(e.redis)
	rs := redsync.New(redsyncgoredis.NewPool(e.redis))
	rlPrefix, rsPrefix, rawPrefix := e.prefix+"redislock:", e.prefix+"redsync:", e.prefix+"raw:"
	opts := &baton.AcquireOptions{AtMostFor: leaseLen}
	return comparison{
		id:    "lock-redis",
		title: "Lock acquire + release on Redis",
		note: "Each goroutine locks a name of its own (uncontended): the cost of a grant and a release. " +
			"baton issues a fencing token and reports server-clock lease times; redislock, redsync and raw do neither. " +
			"raw = `SET NX PX` + `EVALSHA` compare-and-delete, the least any Redis lock can do.",
		concs: e.concs,
		contenders: []contender{
			{"baton provider", providerCycle(p)},
			{"baton Locker", func(ctx context.Context, w int) error {
				l, err := lockerOn.TryAcquire(ctx, workerNames[w], opts)
				if err != nil {
					return err
				}
				return l.Release(ctx)
			}},
			{"redislock", func(ctx context.Context, w int) error {
				l, err := rl.Obtain(ctx, rlPrefix+workerNames[w], leaseLen, nil)
				if err != nil {
					return err
				}
				return l.Release(ctx)
			}},
			{"redsync", redsyncCycle(rs, rsPrefix)},
			{"raw", func(ctx context.Context, w int) error {
				owner := lockprovider.NewOwner()
				key := rawPrefix + workerNames[w]
				ok, err := e.redis.SetNX(ctx, key, owner, leaseLen).Result()
				if err != nil {
					return err
				}
				if !ok {
					return errLost
				}
				return rawDelete.Run(ctx, e.redis, []string{key}, owner).Err()
			}},
		},
		ratios: []ratio{
			{"baton provider", "redislock", 1.05},
			{"baton provider", "raw", 0.90},
			{"baton Locker", "redislock", 1.0},
			{"baton Locker", "baton provider", 0.95},
			{"baton provider", "redsync", 0},
		},
	}, nil
}

// rawShedLock is ShedLock's documented PostgreSQL table and statements in
// DB-time mode, issued with pgx: an upsert to acquire, an UPDATE to
// release; no owner token, no fence, no notification.
const (
	rawShedLockTable = `CREATE TABLE IF NOT EXISTS %s.shedlock (
	name varchar(64) NOT NULL PRIMARY KEY,
	lock_until timestamptz NOT NULL,
	locked_at timestamptz NOT NULL,
	locked_by varchar(255) NOT NULL)`
	rawShedLockAcquire = `INSERT INTO shedlock (name, lock_until, locked_at, locked_by)
	VALUES ($1, now() + $2::interval, now(), $3)
	ON CONFLICT (name) DO UPDATE SET lock_until = now() + $2::interval, locked_at = now(), locked_by = $3
	WHERE shedlock.lock_until <= now()`
	rawShedLockRelease = `UPDATE shedlock SET lock_until = now() WHERE name = $1 AND locked_by = $2`
)

func postgresLockComparison(e *env, p *postgres.Provider, pool *pgxpool.Pool) comparison {
	return comparison{
		id:    "lock-postgres",
		title: "Lock acquire + release on PostgreSQL",
		note: "Each goroutine locks a name of its own. raw = ShedLock's upsert/update statements through pgx " +
			"(no owner token, no fencing token, no notification).",
		concs: e.concs,
		contenders: []contender{
			{"baton provider", providerCycle(p)},
			{"raw ShedLock", func(ctx context.Context, w int) error {
				name := workerNames[w]
				tag, err := pool.Exec(ctx, rawShedLockAcquire, name, leaseLen, "bench")
				if err != nil {
					return err
				}
				if tag.RowsAffected() != 1 {
					return errLost
				}
				_, err = pool.Exec(ctx, rawShedLockRelease, name, "bench")
				return err
			}},
		},
		ratios: []ratio{{"baton provider", "raw ShedLock", 0.95}},
	}
}
