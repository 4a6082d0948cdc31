package postgres

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/baton-go/baton/internal/batch"
	"github.com/baton-go/baton/internal/check"
	"github.com/baton-go/baton/internal/ratewire"
	"github.com/baton-go/baton/lockprovider"
)

// RateLimit implements lockprovider.RateLimiter with one statement, a call
// of the function <RateTable>_take that Migrate creates next to the rate
// table (migrations/002_ratelimit.sql). In its own transaction the function
// locks the request's rows (one per key and limit, in a fixed order, so
// requests never deadlock), reads clock_timestamp() after the locks,
// decides in integer microseconds and writes only when it charges. Requests
// on one hot key therefore queue on its row locks: throughput per key is
// about one decision per statement time.
//
// Expired rows (expires_at, µs, in the past) no longer affect any decision.
// About one call in 256 deletes up to 2048 of them, skipping rows other
// sessions hold, so the table stays bounded by the keys in use; SweepRates
// deletes all of them at once, e.g. from a periodic job.
//
// With a pgx.Tx as the DB, the decision takes part in the caller's
// transaction and its row locks are held until that transaction ends.
func (p *Provider) RateLimit(ctx context.Context, r lockprovider.RateRequest) (lockprovider.RateResult, error) {
	if err := check.Args(ctx, r.Validate()); err != nil {
		return lockprovider.RateResult{}, err
	}
	ids, args := ratewire.Args(r.Limits)
	var v []int64
	err := p.db.QueryRow(ctx, "SELECT "+p.rateFunc()+"($1, $2, $3, $4, $5, $6)",
		r.Key, r.N, int64(r.MaxDelay/time.Microsecond), r.Refund, ids, args).Scan(&v)
	if err != nil {
		return lockprovider.RateResult{}, opError("rate limit", r.Key, err)
	}
	return ratewire.Decode(v, len(r.Limits))
}

// SweepRates deletes every expired rate-limit row and returns how many. It
// is optional (decisions sweep as they go) and safe to run concurrently
// with decisions: rows other sessions hold are skipped.
func (p *Provider) SweepRates(ctx context.Context) (int64, error) {
	const size = 10000
	return batch.Sweep(ctx, size, func(ctx context.Context) (int64, error) {
		tag, err := p.db.Exec(ctx, "DELETE FROM "+p.names.Rates+" WHERE ctid = ANY (ARRAY("+
			"SELECT ctid FROM "+p.names.Rates+" WHERE expires_at < (extract(epoch FROM clock_timestamp()) * 1000000)::bigint"+
			" LIMIT "+strconv.Itoa(size)+" FOR UPDATE SKIP LOCKED))")
		if err != nil {
			return 0, fmt.Errorf("postgres: sweep rates: %w", err)
		}
		return tag.RowsAffected(), nil
	})
}

// rateFunc is the quoted, qualified name of the decision function: the
// rate table's name with "_take" appended, in the same schema.
func (p *Provider) rateFunc() string {
	return strings.TrimSuffix(p.names.Rates, `"`) + `_take"`
}
