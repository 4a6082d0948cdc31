package main

import (
	"context"
	"fmt"
	"time"

	"github.com/go-redis/redis_rate/v10"
	"github.com/ulule/limiter/v3"
	ululeredis "github.com/ulule/limiter/v3/drivers/store/redis"

	"github.com/baton-go/baton/batontype"

	"github.com/baton-go/baton/lockprovider"
	"github.com/baton-go/baton/ratelimit"
)

var algorithms = []ratelimit.Algorithm{
	ratelimit.FixedWindow, ratelimit.SlidingLog, ratelimit.SlidingWindow, ratelimit.TokenBucket, ratelimit.GCRA,
}

// benchLimit admits everything offered, so every decision takes the
// writing path, as the peers' do.
func benchLimit(alg ratelimit.Algorithm) ratelimit.Limit {
	l := ratelimit.Limit{Algorithm: alg, Rate: 1_000_000, Period: time.Second}
	if alg == ratelimit.SlidingLog {
		l.Rate = batontype.MaxLogLimit
	}
	return l
}

func batonRate(store lockprovider.RateLimiter, alg ratelimit.Algorithm, key string) (contender, error) {
	l, err := ratelimit.New(store, []ratelimit.Limit{benchLimit(alg)}, nil)
	if err != nil {
		return contender{}, err
	}
	return contender{alg.String(), func(ctx context.Context, _ int) error {
		res, err := l.Allow(ctx, key)
		if err == nil && !res.Allowed {
			err = fmt.Errorf("%s refused: %+v", alg, res)
		}
		return err
	}}, nil
}

// redisRateComparison: every decision on one hot key, baton's algorithms
// beside redis_rate (GCRA) and ulule/limiter (fixed window, INCR + EXPIRE
// in a pipeline).
func redisRateComparison(e *env, store lockprovider.RateLimiter) (comparison, error) {
	c := comparison{
		id:    "rate-redis",
		title: "Rate-limit decisions on Redis (one hot key)",
		note: "Every contender decides on one key that admits everything, so each decision writes. " +
			"redis_rate implements GCRA in one script; ulule/limiter counts a fixed window with a pipeline.",
		concs: e.concs,
	}
	for _, alg := range algorithms {
		k, err := batonRate(store, alg, e.prefix+"rate-"+alg.String())
		if err != nil {
			return c, err
		}
		c.contenders = append(c.contenders, k)
		c.ratios = append(c.ratios, ratio{alg.String(), "redis_rate", 1.0}, ratio{alg.String(), "ulule/limiter", 0})
	}
	rr := redis_rate.NewLimiter(e.redis)
	rrLimit := redis_rate.Limit{Rate: 1_000_000, Burst: 1_000_000, Period: time.Second}
	rrKey := e.prefix + "rate-redis_rate"
	ust, err := ululeredis.NewStoreWithOptions(e.redis, limiter.StoreOptions{Prefix: e.prefix + "ulule", MaxRetry: 3})
	if err != nil {
		return c, err
	}
	ul := limiter.New(ust, limiter.Rate{Period: time.Second, Limit: 1_000_000})
	ulKey := "rate"
	c.contenders = append(c.contenders,
		contender{"redis_rate", func(ctx context.Context, _ int) error {
			res, err := rr.Allow(ctx, rrKey, rrLimit)
			if err == nil && res.Allowed == 0 {
				err = fmt.Errorf("redis_rate refused: %+v", res)
			}
			return err
		}},
		contender{"ulule/limiter", func(ctx context.Context, _ int) error {
			res, err := ul.Get(ctx, ulKey)
			if err == nil && res.Reached {
				err = fmt.Errorf("ulule refused: %+v", res)
			}
			return err
		}},
	)
	return c, nil
}

// postgresRateComparison: each algorithm on one hot key, where every
// decision locks the same row: the worst case.
func postgresRateComparison(e *env, store lockprovider.RateLimiter) (comparison, error) {
	c := comparison{
		id:    "rate-postgres",
		title: "Rate-limit decisions on PostgreSQL (one hot key)",
		note:  "Every decision locks the key's row, so this is the worst case; there is no peer.",
		concs: e.concs,
	}
	for _, alg := range algorithms {
		k, err := batonRate(store, alg, e.prefix+"rate-"+alg.String())
		if err != nil {
			return c, err
		}
		c.contenders = append(c.contenders, k)
	}
	return c, nil
}
