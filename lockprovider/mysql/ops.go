package mysql

import (
	"cmp"
	"context"
	"database/sql"
	"time"

	"github.com/baton-go/baton/batontype"
	"github.com/baton-go/baton/internal/check"
	"github.com/baton-go/baton/internal/sqlprov"
	"github.com/baton-go/baton/lockprovider"
)

// opsQueries are the statements of the operator capabilities.
type opsQueries struct {
	acquireRun, releaseRun, forceRelease, runs, lastRuns string
	register, heartbeat, deregister, instances, departed string
	listRates, resetRate                                 string
}

const runCols = "r.job, " + "TIMESTAMPDIFF(MICROSECOND, TIMESTAMP'1970-01-01 00:00:00', r.tick), r.locked_by, r.token, " +
	"TIMESTAMPDIFF(MICROSECOND, TIMESTAMP'1970-01-01 00:00:00', r.started_at), " +
	"TIMESTAMPDIFF(MICROSECOND, TIMESTAMP'1970-01-01 00:00:00', r.finished_at), r.outcome, r.error, r.catch_up, r.manual, r.stack, " +
	"r.released_by, TIMESTAMPDIFF(MICROSECOND, TIMESTAMP'1970-01-01 00:00:00', r.released_at)"

func newOpsQueries(n names) opsQueries {
	return opsQueries{
		acquireRun:   "CALL " + n.proc("acquire_run") + "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
		releaseRun:   "CALL " + n.proc("release_run") + "(?, ?, ?, ?, ?, ?, ?)",
		forceRelease: "CALL " + n.proc("force_release") + "(?, ?, ?)",
		runs: "SELECT " + runCols + " FROM " + n.Runs + " r WHERE r.job = ?" +
			" AND (? IS NULL OR r.started_at >= " + dt("?") + ")" +
			" AND (? IS NULL OR r.started_at < " + dt("?") + ")" +
			" ORDER BY r.started_at DESC, r.token DESC LIMIT ?",
		lastRuns: "(SELECT " + runCols + ", FALSE FROM " + n.Runs + " r WHERE r.job = ? ORDER BY r.token DESC LIMIT 1)" +
			" UNION ALL (SELECT " + runCols + ", TRUE FROM " + n.Runs + " r WHERE r.job = ? AND r.outcome = 'succeeded' ORDER BY r.token DESC LIMIT 1)",
		register: "CALL " + n.proc("register") + "(?, ?, ?)",
		// One statement reads the clock once: both times are the same
		// instant.
		heartbeat: "UPDATE " + n.Registry + " SET heartbeat_at = UTC_TIMESTAMP(6), until = UTC_TIMESTAMP(6) + INTERVAL ? MICROSECOND" +
			" WHERE locked_by = ? AND until > UTC_TIMESTAMP(6)",
		// A clean shutdown keeps the entry, departed, until the
		// retention has passed (the register procedure drops it then).
		deregister: "UPDATE " + n.Registry + " SET until = UTC_TIMESTAMP(6), left_at = UTC_TIMESTAMP(6)" +
			" WHERE locked_by = ? AND until > UTC_TIMESTAMP(6)",
		departed: "SELECT g.locked_by, g.info, " + us("g.heartbeat_at") + ", " + us("g.until") + ", g.left_at IS NOT NULL FROM " + n.Registry + " g" +
			" WHERE g.until <= UTC_TIMESTAMP(6) AND g.until > UTC_TIMESTAMP(6) - INTERVAL 1 HOUR ORDER BY g.locked_by",
		instances: "SELECT g.locked_by, g.info, " + us("g.heartbeat_at") + ", " + us("g.until") + " FROM " + n.Registry + " g" +
			" WHERE g.until > UTC_TIMESTAMP(6) ORDER BY g.locked_by",
		listRates: "SELECT r.rkey, r.lim, r.expires_at FROM " + n.Rates + " r WHERE r.expires_at > " + us("UTC_TIMESTAMP(6)") +
			" ORDER BY r.rkey, r.lim",
		resetRate: "CALL " + n.rateProc("reset") + "(?)",
	}
}

// ForceRelease implements lockprovider.Admin in one CALL, which also
// marks the freed lease's run row, if there is one.
func (p *Provider) ForceRelease(ctx context.Context, fp lockprovider.ForceReleaseParams) (batontype.LeaseInfo, error) {
	if err := check.Args(ctx, fp.Validate()); err != nil {
		return batontype.LeaseInfo{}, err
	}
	name := fp.Name
	var (
		fence, at, until, lastTick, atLeast sql.NullInt64
		by                                  sql.NullString
	)
	err := p.db.QueryRowContext(ctx, p.q.ops.forceRelease, name, fp.Token, fp.By).Scan(&fence, &by, &at, &until, &lastTick, &atLeast)
	if err != nil {
		return batontype.LeaseInfo{}, opError("force-release", name, err)
	}
	if !fence.Valid {
		return batontype.LeaseInfo{}, batontype.ErrNotHeld
	}
	info := batontype.LeaseInfo{Name: name, Exists: true, Held: true, LockedBy: by.String, Token: fence.Int64,
		GrantedAt: time.UnixMicro(at.Int64), Until: time.UnixMicro(until.Int64)}
	if lastTick.Valid {
		info.LastTick = time.UnixMicro(lastTick.Int64)
	}
	info.AtLeastUntil = lockprovider.MinHold(info.GrantedAt, time.UnixMicro(atLeast.Int64))
	return info, nil
}

// ResetRate implements lockprovider.Admin in one statement.
func (p *Provider) ResetRate(ctx context.Context, key string) error {
	return p.run.Exec(ctx, batontype.ValidateName(key), "reset rate", key, p.q.ops.resetRate, key)
}

// Ping implements lockprovider.Admin.
func (p *Provider) Ping(ctx context.Context) error { return p.run.Ping(ctx) }

// ListRates implements lockprovider.RateLister in one statement.
func (p *Provider) ListRates(ctx context.Context) ([]batontype.RateInfo, error) {
	return p.run.ListRates(ctx, p.q.ops.listRates)
}

// AcquireRun implements lockprovider.Ledger: Acquire and, for a new
// grant, the run row with the retention applied, in one CALL.
func (p *Provider) AcquireRun(ctx context.Context, a lockprovider.AcquireParams, run lockprovider.RunStart) (batontype.Lease, error) {
	if err := check.Args(ctx, a.Validate(), run.Validate()); err != nil {
		return batontype.Lease{}, err
	}
	ret := run.Retention.WithDefaults()
	args := append(acquireArgs(a), run.CatchUp, run.Manual, int64(ret.MaxRuns), ret.MaxAge.Microseconds())
	var r acquireRow
	if err := p.db.QueryRowContext(ctx, p.q.ops.acquireRun, args...).Scan(r.dest()...); err != nil {
		return batontype.Lease{}, acquireError(a.Name, err)
	}
	return r.result(a)
}

// ReleaseRun implements lockprovider.Ledger: Release and the run row
// completed, in one CALL. The row is found by job and token; the rest of
// end.Run is what AcquireRun stored.
func (p *Provider) ReleaseRun(ctx context.Context, r lockprovider.ReleaseParams, end lockprovider.RunEnd) error {
	if err := check.Args(ctx, r.Validate(), end.Validate()); err != nil {
		return err
	}
	var held bool
	err := p.db.QueryRowContext(ctx, p.q.ops.releaseRun, r.Name, r.Owner, end.Run.Token,
		string(end.Outcome), batontype.CutError(end.Error), end.Elapsed.Microseconds(), batontype.CutStack(end.Stack)).Scan(&held)
	switch {
	case err != nil:
		return opError("release", r.Name, err)
	case !held:
		return batontype.ErrNotHeld
	}
	return nil
}

// scanRun reads one row of runCols (and extra).
func scanRun(rows *sql.Rows, extra ...any) (batontype.RunRecord, error) {
	var (
		r               batontype.RunRecord
		tick, fin, rel  sql.NullInt64
		started         int64
		outcome         string
		catchUp, manual bool
	)
	dst := append([]any{&r.Job, &tick, &r.LockedBy, &r.Token, &started, &fin, &outcome, &r.Error, &catchUp, &manual, &r.Stack,
		&r.ReleasedBy, &rel}, extra...)
	if err := rows.Scan(dst...); err != nil {
		return r, err
	}
	r.Started = time.UnixMicro(started)
	if tick.Valid {
		r.Tick = time.UnixMicro(tick.Int64)
	}
	if fin.Valid {
		r.Finished = time.UnixMicro(fin.Int64)
	}
	if rel.Valid {
		r.ReleasedAt = time.UnixMicro(rel.Int64)
	}
	r.Outcome = batontype.Outcome(outcome)
	r.CatchUp, r.Manual = catchUp, manual
	return r, nil
}

// Runs implements lockprovider.Ledger in one statement.
func (p *Provider) Runs(ctx context.Context, q batontype.RunQuery) ([]batontype.RunRecord, error) {
	if err := check.Args(ctx, q.Validate()); err != nil {
		return nil, err
	}
	since, until := tickArg(q.Since), tickArg(q.Until)
	rows, err := p.db.QueryContext(ctx, p.q.ops.runs, q.Job, since, since, until, until, q.Lim())
	if err != nil {
		return nil, opError("runs of", q.Job, err)
	}
	defer rows.Close()
	var out []batontype.RunRecord
	for rows.Next() {
		r, err := scanRun(rows)
		if err != nil {
			return nil, opError("runs of", q.Job, err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, opError("runs of", q.Job, err)
	}
	return out, nil
}

// LastRuns implements lockprovider.Ledger in one statement.
func (p *Provider) LastRuns(ctx context.Context, job string) (last, lastSuccess batontype.RunRecord, err error) {
	if err := check.Args(ctx, batontype.ValidateName(job)); err != nil {
		return last, lastSuccess, err
	}
	rows, err := p.db.QueryContext(ctx, p.q.ops.lastRuns, job, job)
	if err != nil {
		return last, lastSuccess, opError("last runs of", job, err)
	}
	defer rows.Close()
	for rows.Next() {
		var success bool
		r, err := scanRun(rows, &success)
		if err != nil {
			return last, lastSuccess, opError("last runs of", job, err)
		}
		if success {
			lastSuccess = r
		} else {
			last = r
		}
	}
	if err := rows.Err(); err != nil {
		return last, lastSuccess, opError("last runs of", job, err)
	}
	return last, lastSuccess, nil
}

// Register implements lockprovider.Registry in one CALL.
func (p *Provider) Register(ctx context.Context, inst batontype.Instance, ttl time.Duration) error {
	return p.run.Register(ctx, p.q.ops.register, inst, ttl)
}

// Heartbeat implements lockprovider.Registry in one statement.
//
// The new heartbeat_at differs from the stored one (a later microsecond),
// so a live entry always counts as changed.
func (p *Provider) Heartbeat(ctx context.Context, lockedBy string, ttl time.Duration) error {
	return p.run.Changed(ctx, cmp.Or(batontype.ValidateLockedBy(lockedBy), batontype.ValidateRegistryTTL(ttl)),
		"heartbeat", lockedBy, batontype.ErrNotRegistered, p.q.ops.heartbeat, ttl.Microseconds(), lockedBy)
}

// Deregister implements lockprovider.Registry in one statement.
func (p *Provider) Deregister(ctx context.Context, lockedBy string) error {
	return p.run.Exec(ctx, batontype.ValidateLockedBy(lockedBy), "deregister", lockedBy, p.q.ops.deregister, lockedBy)
}

// Instances implements lockprovider.Registry in one statement.
func (p *Provider) Instances(ctx context.Context) ([]batontype.Instance, error) {
	ds, err := p.registryRows(ctx, p.q.ops.instances, "instances", false)
	if err != nil {
		return nil, err
	}
	return sqlprov.Live(ds), nil
}

// Departed implements lockprovider.Departures in one statement.
func (p *Provider) Departed(ctx context.Context) ([]batontype.Departed, error) {
	return p.registryRows(ctx, p.q.ops.departed, "departed", true)
}

// The register procedure and the departed query keep departed entries
// for one hour: they must change with batontype.DepartedRetention.
const _ = uint(batontype.DepartedRetention-time.Hour) + uint(time.Hour-batontype.DepartedRetention)

// registryRows reads registry entries: locked_by, info, heartbeat_at,
// until and, for departed ones, whether it left.
func (p *Provider) registryRows(ctx context.Context, query, what string, departed bool) ([]batontype.Departed, error) {
	if err := lockprovider.CheckContext(ctx); err != nil {
		return nil, err
	}
	rows, err := p.db.QueryContext(ctx, query)
	if err != nil {
		return nil, opError(what, "", err)
	}
	defer rows.Close()
	var out []batontype.Departed
	for rows.Next() {
		var (
			id, info   string
			hb, expiry int64
			left       bool
		)
		dst := []any{&id, &info, &hb, &expiry}
		if departed {
			dst = append(dst, &left)
		}
		if err := rows.Scan(dst...); err != nil {
			return nil, opError(what, "", err)
		}
		d, err := sqlprov.Entry(id, info, time.UnixMicro(hb), time.UnixMicro(expiry), left)
		if err != nil {
			return nil, opError(what, "", err)
		}
		out = append(out, d)
	}
	if err := rows.Err(); err != nil {
		return nil, opError(what, "", err)
	}
	return out, nil
}
