package mysql

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/baton-go/baton/internal/batch"
	"github.com/baton-go/baton/internal/check"
	"github.com/baton-go/baton/internal/ratewire"
	"github.com/baton-go/baton/lockprovider"
)

// sweepBatch bounds the rows of one SweepRates statement.
const sweepBatch = 10000

// RateLimit implements lockprovider.RateLimiter with one CALL of the
// procedure <RateTable>_take that Migrate creates
// (migrations/002_ratelimit.sql). The procedure holds a named lock of
// the key (GET_LOCK) while it reads the key's rows, reads the server
// clock, decides in integer microseconds and writes only when it charges:
// its statements run one by one in autocommit, and the named lock makes
// them atomic with respect to every other decision on the key. Requests
// on one hot key therefore queue on its named lock: throughput per key is
// about one decision per procedure run. A connection killed in the
// middle of a decision may leave it half-written (some limits charged);
// the error then says the outcome is unknown, as for any error.
//
// Expired rows (expires_at, µs, in the past) no longer affect any
// decision. About one call in 64 deletes up to 512 of them, each under its
// key's named lock, skipping keys with a decision in progress, so the
// table stays bounded by the keys in use; SweepRates deletes all of them
// at once, e.g. from a periodic job.
func (p *Provider) RateLimit(ctx context.Context, r lockprovider.RateRequest) (lockprovider.RateResult, error) {
	if err := check.Args(ctx, r.Validate()); err != nil {
		return lockprovider.RateResult{}, err
	}
	ids, args := ratewire.Args(r.Limits)
	idsJSON, err := json.Marshal(ids)
	if err != nil {
		return lockprovider.RateResult{}, err
	}
	argsJSON, err := json.Marshal(args)
	if err != nil {
		return lockprovider.RateResult{}, err
	}
	var reply string
	err = p.db.QueryRowContext(ctx, p.q.rateTake, r.Key, r.N, int64(r.MaxDelay/time.Microsecond), r.Refund,
		string(idsJSON), string(argsJSON)).Scan(&reply)
	if err != nil {
		return lockprovider.RateResult{}, opError("rate limit", r.Key, err)
	}
	v, err := ratewire.ParseReply(reply)
	if err != nil {
		return lockprovider.RateResult{}, fmt.Errorf("mysql: rate limit %q: answer %q: %w", r.Key, reply, err)
	}
	return ratewire.Decode(v, len(r.Limits))
}

// SweepRates deletes every expired rate-limit row and returns how many. It
// is optional (decisions sweep as they go) and safe to run concurrently
// with decisions: it deletes a row under its key's named lock, as a
// decision holds it, and skips the keys of decisions in progress.
func (p *Provider) SweepRates(ctx context.Context) (int64, error) {
	return batch.Sweep(ctx, sweepBatch, func(ctx context.Context) (int64, error) {
		var n int64
		if err := p.db.QueryRowContext(ctx, p.q.rateSweep, sweepBatch).Scan(&n); err != nil {
			return 0, opError("sweep rates", "", err)
		}
		return n, nil
	})
}
