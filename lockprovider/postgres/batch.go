package postgres

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgtype"

	"github.com/baton-go/baton/batontype"
	"github.com/baton-go/baton/internal/batch"
	"github.com/baton-go/baton/lockprovider"
)

// conflictMarker in batch_acquire.sql stands for acquire.sql's ON
// CONFLICT clause.
const conflictMarker = "ON_CONFLICT_OF_ACQUIRE_SQL"

// renderBatch builds the batch statements from batch_acquire.sql and
// batch_ledger.sql around acquire.sql's own ON CONFLICT clause.
func (p *Provider) renderBatch() error {
	load := func(file string) (string, error) {
		b, err := queryFS.ReadFile("queries/" + file)
		if err != nil {
			return "", err
		}
		return render(file, string(b), p.names)
	}
	batch, err := load("batch_acquire.sql")
	if err != nil {
		return err
	}
	ledger, err := load("batch_ledger.sql")
	if err != nil {
		return err
	}
	from := strings.Index(p.acquireTickSQL, "ON CONFLICT (name) DO UPDATE")
	to := strings.Index(p.acquireTickSQL, "RETURNING t.locked_at")
	if from < 0 || to < from || !strings.Contains(batch, conflictMarker) {
		return errors.New("postgres: acquire.sql has no ON CONFLICT clause for the batch statement")
	}
	batch = strings.Replace(batch, conflictMarker, strings.TrimSpace(p.acquireTickSQL[from:to]), 1)
	i := strings.Index(batch, batchFinal)
	if i < 0 {
		return errors.New("postgres: batch_acquire.sql has no final SELECT to extend with the ledger")
	}
	p.batchSQL = batch
	p.batchRunSQL = batch[:i] + "\n" + ledger + batch[i:]
	return p.renderReleaseBatch()
}

// renderReleaseBatch builds ReleaseBatch's statement from release.sql:
// the same UPDATE and announcement, its one name and owner replaced by
// arrays of them, and each released row's position in the arrays
// returned.
func (p *Provider) renderReleaseBatch() error {
	const (
		where     = "WHERE t.name = $1 AND t.owner = $2"
		returning = "RETURNING "
	)
	if strings.Count(p.releaseSQL, where) != 1 || strings.Count(p.releaseSQL, returning) != 1 {
		return errors.New("postgres: release.sql does not have the WHERE and RETURNING clauses the batch statement replaces")
	}
	sql := strings.Replace(p.releaseSQL, where,
		"FROM unnest($1::text[], $2::text[]) WITH ORDINALITY AS i(name, owner, ord)\nWHERE t.name = i.name AND t.owner = i.owner", 1)
	p.releaseBatchSQL = strings.Replace(sql, returning, returning+"i.ord, ", 1)
	return p.renderReleaseRunBatch()
}

// renderReleaseRunBatch builds ReleaseRunBatch's statement from
// ReleaseRun's (ledger_release.sql after release.sql): the batch release
// as the CTE rel, and the run rows' update over arrays of the ends, so
// the rows are completed exactly as ReleaseRun completes them.
func (p *Provider) renderReleaseRunBatch() error {
	sql := p.ops.releaseRun
	for _, r := range []struct {
		old, new string
		n        int // occurrences expected
	}{
		{p.releaseSQL, p.releaseBatchSQL, 1},
		{"$6::interval", "e.elapsed", 2},
		{"$4::text", "e.outcome", 1},
		{"$5::text", "e.error", 1},
		{"$7::text", "e.stack", 1},
		{"WHERE r.job = $1 AND r.token = $3::bigint",
			"FROM unnest($1::text[], $3::bigint[], $4::text[], $5::text[], $6::interval[], $7::text[]) AS e(job, token, outcome, error, elapsed, stack)\n    WHERE r.job = e.job AND r.token = e.token", 1},
		{"SELECT 1 FROM rel", "SELECT ord FROM rel", 1},
	} {
		if strings.Count(sql, r.old) != r.n {
			return fmt.Errorf("postgres: ledger_release.sql does not have the %q the batch statement replaces", r.old)
		}
		sql = strings.ReplaceAll(sql, r.old, r.new)
	}
	p.releaseRunBatchSQL = sql
	return nil
}

// batchFinal starts the final SELECT of batch_acquire.sql.
const batchFinal = "\nSELECT i.ord,"

// AcquireBatch implements lockprovider.BatchAcquirer in one statement
// (batch_acquire.sql). A row another session has locked is not waited
// for: its item gets ErrNotAcquired, as Acquire's does.
func (p *Provider) AcquireBatch(ctx context.Context, ps []lockprovider.AcquireParams) ([]lockprovider.BatchResult, error) {
	return batch.Acquire(ctx, ps, p.batch)
}

// AcquireRunBatch implements lockprovider.BatchLedger in the same one
// statement: each grant also inserts its run row as AcquireRun does.
func (p *Provider) AcquireRunBatch(ctx context.Context, ps []lockprovider.AcquireParams, run lockprovider.RunStart) ([]lockprovider.BatchResult, error) {
	return batch.AcquireRun(ctx, ps, run, p.batch)
}

// batch sends the valid items (out[i].Err nil) of a validated batch in one
// statement and fills in their results.
func (p *Provider) batch(ctx context.Context, ps []lockprovider.AcquireParams, run *lockprovider.RunStart, out []lockprovider.BatchResult) {
	idx := make([]int, 0, len(ps)) // the sent items, by position in the arrays
	var (
		names, owners, lockedBy []string
		atMost, atLeast         []int64
		ticks                   []pgtype.Timestamptz
	)
	for i, ap := range ps {
		if out[i].Err != nil {
			continue
		}
		idx = append(idx, i)
		names, owners, lockedBy = append(names, ap.Name), append(owners, ap.Owner), append(lockedBy, ap.LockedBy)
		atMost, atLeast = append(atMost, ap.AtMostFor.Microseconds()), append(atLeast, ap.AtLeastFor.Microseconds())
		ticks = append(ticks, pgtype.Timestamptz{Time: ap.Tick, Valid: !ap.Tick.IsZero()})
	}
	if len(idx) == 0 {
		return
	}
	sql, args := p.batchSQL, []any{names, owners, lockedBy, atMost, atLeast, ticks}
	if run != nil {
		ret := run.Retention.WithDefaults()
		sql = p.batchRunSQL
		args = append(args, run.CatchUp, run.Manual, ret.MaxRuns, ret.MaxAge)
	}
	fail := func(err error) {
		for _, i := range idx {
			out[i].Err = acquireError(ps[i].Name, err)
		}
	}
	rows, err := p.db.Query(ctx, sql, args...)
	if err != nil {
		fail(err)
		return
	}
	defer rows.Close()
	seen := 0
	for rows.Next() {
		var (
			ord int64
			r   acquireRow
		)
		if err := rows.Scan(append([]any{&ord}, r.dest()...)...); err != nil {
			fail(err)
			return
		}
		if ord < 1 || int(ord) > len(idx) {
			fail(errors.New("batch row out of range"))
			return
		}
		i := idx[ord-1]
		l, err := r.result(ps[i])
		if err == nil && ps[i].Tick.IsZero() {
			l.Tick = time.Time{} // as Acquire without a tick
		}
		out[i] = lockprovider.BatchResult{Lease: l, Err: err}
		seen++
	}
	if err := rows.Err(); err != nil {
		fail(err)
		return
	}
	if seen != len(idx) {
		fail(errors.New("batch answered fewer rows than items"))
	}
}

// ReleaseBatch implements lockprovider.BatchReleaser in one statement:
// release.sql's UPDATE over arrays of names and owners. An item whose row
// it did not update was not held, as Release's ErrNotHeld.
func (p *Provider) ReleaseBatch(ctx context.Context, ps []lockprovider.ReleaseParams) ([]error, error) {
	return batch.Release(ctx, ps, p.releaseBatch)
}

// ReleaseRunBatch implements lockprovider.BatchLedger in one statement:
// ReleaseBatch's, which also completes each item's run row as ReleaseRun
// does.
func (p *Provider) ReleaseRunBatch(ctx context.Context, ps []lockprovider.ReleaseParams, ends []lockprovider.RunEnd) ([]error, error) {
	return batch.ReleaseRun(ctx, ps, ends, p.releaseBatch)
}

// releaseBatch sends the valid items (errs[i] nil) of a validated batch,
// with their runs' ends when ends is not nil.
func (p *Provider) releaseBatch(ctx context.Context, ps []lockprovider.ReleaseParams, ends []lockprovider.RunEnd, errs []error) {
	idx := make([]int, 0, len(ps)) // the sent items, by position in the arrays
	var (
		names, owners    []string
		tokens           []int64
		outcomes, errTxt []string
		stacks           []string
		elapsed          []time.Duration
	)
	for i, rp := range ps {
		if errs[i] != nil {
			continue
		}
		idx = append(idx, i)
		names, owners = append(names, rp.Name), append(owners, rp.Owner)
		if ends != nil {
			e := ends[i]
			tokens, elapsed = append(tokens, e.Run.Token), append(elapsed, e.Elapsed)
			outcomes, errTxt = append(outcomes, string(e.Outcome)), append(errTxt, batontype.CutError(e.Error))
			stacks = append(stacks, batontype.CutStack(e.Stack))
		}
	}
	if len(idx) == 0 {
		return
	}
	fail := func(err error) {
		for _, i := range idx {
			errs[i] = opError("release", ps[i].Name, err)
		}
	}
	sql, args := p.releaseBatchSQL, []any{names, owners}
	if ends != nil {
		sql, args = p.releaseRunBatchSQL, append(args, tokens, outcomes, errTxt, elapsed, stacks)
	}
	rows, err := p.db.Query(ctx, sql, args...)
	if err != nil {
		fail(err)
		return
	}
	defer rows.Close()
	released := make([]bool, len(idx))
	var (
		ord    int64 // the item's position in the arrays
		silent bool  // the announcement's column of release.sql, unused
	)
	dest := []any{&ord, &silent}
	if ends != nil {
		dest = dest[:1] // ledger_release.sql answers the position only
	}
	for rows.Next() {
		if err := rows.Scan(dest...); err != nil {
			fail(err)
			return
		}
		if ord < 1 || int(ord) > len(idx) {
			fail(errors.New("batch row out of range"))
			return
		}
		released[ord-1] = true
	}
	if err := rows.Err(); err != nil {
		fail(err)
		return
	}
	for k, i := range idx {
		if !released[k] {
			errs[i] = batontype.ErrNotHeld
		}
	}
}
