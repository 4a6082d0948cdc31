package postgres

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/baton-go/baton/batontype"
	"github.com/baton-go/baton/internal/check"
	"github.com/baton-go/baton/internal/sqlprov"
	"github.com/baton-go/baton/lockprovider"
)

// Table suffixes of the ledger and the registry, next to the lease table.
const (
	runsSuffix     = "_runs"
	registrySuffix = "_reg"
)

// opsQueries are the rendered statements of the operator capabilities.
type opsQueries struct {
	acquireRun, releaseRun, forceRelease, runs, lastRuns string
	register, heartbeat, deregister, instances, departed string
	listRates, resetRate                                 string
}

// acquireFinal starts the final SELECT of acquire.sql, before which the
// ledger's CTEs are spliced.
const acquireFinal = "\nSELECT up.fence IS NOT NULL"

// render builds the statements. The ledger's claim and release reuse the
// text of acquire.sql and release.sql, so the lease logic exists once.
func (o *opsQueries) render(p *Provider) error {
	load := func(file string) (string, error) {
		b, err := queryFS.ReadFile("queries/" + file)
		if err != nil {
			return "", err
		}
		return render(file, string(b), p.names)
	}
	for _, q := range []struct {
		file string
		dst  *string
	}{
		{"ledger_acquire.sql", &o.acquireRun},
		{"ledger_release.sql", &o.releaseRun},
		{"ops_force_release.sql", &o.forceRelease},
		{"ops_runs.sql", &o.runs},
		{"ops_last_runs.sql", &o.lastRuns},
		{"ops_register.sql", &o.register},
		{"ops_heartbeat.sql", &o.heartbeat},
		{"ops_instances.sql", &o.instances},
		{"ops_list_rates.sql", &o.listRates},
	} {
		s, err := load(q.file)
		if err != nil {
			return err
		}
		*q.dst = s
	}
	i := strings.Index(p.acquireTickSQL, acquireFinal)
	if i < 0 {
		return errors.New("postgres: acquire.sql has no final SELECT to extend with the ledger")
	}
	// The trim function: the runs table's name with "_trim" appended, in
	// the same schema (see 003_ops.sql).
	o.acquireRun = strings.ReplaceAll(o.acquireRun, "__TRIM__", strings.TrimSuffix(p.names.Runs, `"`)+`_trim"`)
	o.acquireRun = p.acquireTickSQL[:i] + "\n" + o.acquireRun + p.acquireTickSQL[i:]
	o.releaseRun = "WITH rel AS (\n" + p.releaseSQL + "\n)\n" + o.releaseRun
	keep := fmt.Sprintf("interval '%d milliseconds'", batontype.DepartedRetention.Milliseconds())
	o.register = strings.ReplaceAll(o.register, "__KEEP__", keep)
	// A clean shutdown keeps the entry, departed, until the retention
	// has passed.
	o.deregister = "UPDATE " + p.names.Registry + " SET until = clock_timestamp(), left_at = clock_timestamp()" +
		" WHERE locked_by = $1 AND until > clock_timestamp()"
	o.departed = "SELECT g.locked_by, g.info, g.heartbeat_at, g.until, g.left_at IS NOT NULL FROM " + p.names.Registry + " g" +
		" WHERE g.until <= clock_timestamp() AND g.until > clock_timestamp() - " + keep + " ORDER BY g.locked_by"
	o.resetRate = "DELETE FROM " + p.names.Rates + " WHERE key = $1"
	return nil
}

// ForceRelease implements lockprovider.Admin in one statement, which also
// marks the freed lease's run row, if there is one.
func (p *Provider) ForceRelease(ctx context.Context, fp lockprovider.ForceReleaseParams) (batontype.LeaseInfo, error) {
	if err := check.Args(ctx, fp.Validate()); err != nil {
		return batontype.LeaseInfo{}, err
	}
	name := fp.Name
	info := batontype.LeaseInfo{Name: name, Exists: true, Held: true}
	var (
		lastTick pgtype.Timestamptz
		atLeast  time.Time
		ignored  bool
	)
	err := p.db.QueryRow(ctx, p.ops.forceRelease, name, fp.Token, fp.By).
		Scan(&info.LockedBy, &info.GrantedAt, &info.Until, &info.Token, &lastTick, &atLeast, &ignored)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return batontype.LeaseInfo{}, batontype.ErrNotHeld
	case err != nil:
		return batontype.LeaseInfo{}, opError("force-release", name, err)
	}
	if lastTick.Valid {
		info.LastTick = lastTick.Time
	}
	info.AtLeastUntil = lockprovider.MinHold(info.GrantedAt, atLeast)
	return info, nil
}

// ResetRate implements lockprovider.Admin in one statement.
func (p *Provider) ResetRate(ctx context.Context, key string) error {
	return p.run.Exec(ctx, batontype.ValidateName(key), "reset rate", key, p.ops.resetRate, key)
}

// Ping implements lockprovider.Admin.
func (p *Provider) Ping(ctx context.Context) error { return p.run.Ping(ctx) }

// ListRates implements lockprovider.RateLister in one statement.
func (p *Provider) ListRates(ctx context.Context) ([]batontype.RateInfo, error) {
	return p.run.ListRates(ctx, p.ops.listRates)
}

// AcquireRun implements lockprovider.Ledger: acquire.sql with the run row
// inserted and the retention applied, in one statement.
func (p *Provider) AcquireRun(ctx context.Context, a lockprovider.AcquireParams, run lockprovider.RunStart) (batontype.Lease, error) {
	if err := check.Args(ctx, a.Validate(), run.Validate()); err != nil {
		return batontype.Lease{}, err
	}
	ret := run.Retention.WithDefaults()
	var tick any
	if !a.Tick.IsZero() {
		tick = a.Tick
	}
	return p.acquireWith(ctx, p.ops.acquireRun, a,
		a.Name, a.Owner, a.LockedBy, a.AtMostFor, a.AtLeastFor, tick,
		run.CatchUp, run.Manual, int64(ret.MaxRuns), ret.MaxAge)
}

// ReleaseRun implements lockprovider.Ledger: release.sql with the run row
// completed, in one statement. The row is found by job and token; the
// rest of end.Run is what AcquireRun stored.
func (p *Provider) ReleaseRun(ctx context.Context, r lockprovider.ReleaseParams, end lockprovider.RunEnd) error {
	if err := check.Args(ctx, r.Validate(), end.Validate()); err != nil {
		return err
	}
	// Exec: the row count (one row if rel released) is the answer.
	tag, err := p.db.Exec(ctx, p.ops.releaseRun, r.Name, r.Owner, end.Run.Token,
		string(end.Outcome), batontype.CutError(end.Error), end.Elapsed, batontype.CutStack(end.Stack))
	switch {
	case err != nil:
		return opError("release", r.Name, err)
	case tag.RowsAffected() == 0:
		return batontype.ErrNotHeld
	}
	return nil
}

func scanRun(row pgx.CollectableRow, extra ...any) (batontype.RunRecord, error) {
	var (
		r              batontype.RunRecord
		tick, fin, rel pgtype.Timestamptz
		outcome        string
	)
	dst := append([]any{&r.Job, &tick, &r.LockedBy, &r.Token, &r.Started, &fin, &outcome, &r.Error, &r.CatchUp, &r.Manual, &r.Stack,
		&r.ReleasedBy, &rel}, extra...)
	if err := row.Scan(dst...); err != nil {
		return r, err
	}
	if tick.Valid {
		r.Tick = tick.Time
	}
	if fin.Valid {
		r.Finished = fin.Time
	}
	if rel.Valid {
		r.ReleasedAt = rel.Time
	}
	r.Outcome = batontype.Outcome(outcome)
	return r, nil
}

// Runs implements lockprovider.Ledger in one statement.
func (p *Provider) Runs(ctx context.Context, q batontype.RunQuery) ([]batontype.RunRecord, error) {
	if err := check.Args(ctx, q.Validate()); err != nil {
		return nil, err
	}
	var since, until any
	if !q.Since.IsZero() {
		since = q.Since
	}
	if !q.Until.IsZero() {
		until = q.Until
	}
	rows, err := p.db.Query(ctx, p.ops.runs, q.Job, since, until, q.Lim())
	if err != nil {
		return nil, opError("runs of", q.Job, err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (batontype.RunRecord, error) { return scanRun(row) })
	if err != nil {
		return nil, opError("runs of", q.Job, err)
	}
	return out, nil
}

// LastRuns implements lockprovider.Ledger in one statement.
func (p *Provider) LastRuns(ctx context.Context, job string) (last, lastSuccess batontype.RunRecord, err error) {
	if err := check.Args(ctx, batontype.ValidateName(job)); err != nil {
		return last, lastSuccess, err
	}
	rows, err := p.db.Query(ctx, p.ops.lastRuns, job)
	if err != nil {
		return last, lastSuccess, opError("last runs of", job, err)
	}
	_, err = pgx.CollectRows(rows, func(row pgx.CollectableRow) (struct{}, error) {
		var success bool
		r, err := scanRun(row, &success)
		if success {
			lastSuccess = r
		} else {
			last = r
		}
		return struct{}{}, err
	})
	if err != nil {
		return last, lastSuccess, opError("last runs of", job, err)
	}
	return last, lastSuccess, nil
}

// Register implements lockprovider.Registry in one statement.
func (p *Provider) Register(ctx context.Context, inst batontype.Instance, ttl time.Duration) error {
	return p.run.Register(ctx, p.ops.register, inst, ttl)
}

// Heartbeat implements lockprovider.Registry in one statement.
func (p *Provider) Heartbeat(ctx context.Context, lockedBy string, ttl time.Duration) error {
	return p.run.Changed(ctx, cmp.Or(batontype.ValidateLockedBy(lockedBy), batontype.ValidateRegistryTTL(ttl)),
		"heartbeat", lockedBy, batontype.ErrNotRegistered, p.ops.heartbeat, lockedBy, ttl)
}

// Deregister implements lockprovider.Registry in one statement.
func (p *Provider) Deregister(ctx context.Context, lockedBy string) error {
	return p.run.Exec(ctx, batontype.ValidateLockedBy(lockedBy), "deregister", lockedBy, p.ops.deregister, lockedBy)
}

// Instances implements lockprovider.Registry in one statement.
func (p *Provider) Instances(ctx context.Context) ([]batontype.Instance, error) {
	ds, err := p.registryRows(ctx, p.ops.instances, "instances", false)
	if err != nil {
		return nil, err
	}
	return sqlprov.Live(ds), nil
}

// Departed implements lockprovider.Departures in one statement.
func (p *Provider) Departed(ctx context.Context) ([]batontype.Departed, error) {
	return p.registryRows(ctx, p.ops.departed, "departed", true)
}

// registryRows reads registry entries: locked_by, info, heartbeat_at,
// until and, for departed ones, whether it left.
func (p *Provider) registryRows(ctx context.Context, query, what string, departed bool) ([]batontype.Departed, error) {
	if err := lockprovider.CheckContext(ctx); err != nil {
		return nil, err
	}
	rows, err := p.db.Query(ctx, query)
	if err != nil {
		return nil, opError(what, "", err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (batontype.Departed, error) {
		var (
			id, info   string
			hb, expiry time.Time
			left       bool
		)
		dst := []any{&id, &info, &hb, &expiry}
		if departed {
			dst = append(dst, &left)
		}
		if err := row.Scan(dst...); err != nil {
			return batontype.Departed{}, err
		}
		return sqlprov.Entry(id, info, hb, expiry, left)
	})
	if err != nil {
		return nil, opError(what, "", err)
	}
	return out, nil
}
