package mysql

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/baton-go/baton/batontype"
	"github.com/baton-go/baton/internal/batch"
	"github.com/baton-go/baton/lockprovider"
)

// errBatchReply is the error of a batch answer that does not parse.
var errBatchReply = errors.New("malformed batch answer")

// AcquireBatch implements lockprovider.BatchAcquirer in one CALL: the
// procedure runs Acquire's grant for each item, in name order, and
// answers all of them in one value. A row another session's transaction
// holds is not waited for: its item gets ErrNotAcquired, as Acquire's
// does, and the others proceed.
func (p *Provider) AcquireBatch(ctx context.Context, ps []lockprovider.AcquireParams) ([]lockprovider.BatchResult, error) {
	return batch.Acquire(ctx, ps, p.batch)
}

// AcquireRunBatch implements lockprovider.BatchLedger in the same one
// CALL: each grant also inserts its run row as AcquireRun does.
func (p *Provider) AcquireRunBatch(ctx context.Context, ps []lockprovider.AcquireParams, run lockprovider.RunStart) ([]lockprovider.BatchResult, error) {
	return batch.AcquireRun(ctx, ps, run, p.batch)
}

// batch sends the valid items (out[i].Err nil) of a validated batch in one
// CALL and fills in their results.
func (p *Provider) batch(ctx context.Context, ps []lockprovider.AcquireParams, run *lockprovider.RunStart, out []lockprovider.BatchResult) {
	idx := make([]int, 0, len(ps)) // the sent items, by position in the JSON array
	items := make([][]any, 0, len(ps))
	for i, ap := range ps {
		if out[i].Err != nil {
			continue
		}
		idx = append(idx, i)
		items = append(items, acquireArgs(ap))
	}
	if len(idx) == 0 {
		return
	}
	fail := func(err error) {
		for _, i := range idx {
			out[i].Err = acquireError(ps[i].Name, err)
		}
	}
	b, err := json.Marshal(items)
	if err != nil {
		fail(err)
		return
	}
	args := []any{string(b), false, false, false, int64(0), int64(0)}
	if run != nil {
		ret := run.Retention.WithDefaults()
		args = []any{string(b), true, run.CatchUp, run.Manual, int64(ret.MaxRuns), ret.MaxAge.Microseconds()}
	}
	var reply string
	if err := p.db.QueryRowContext(ctx, p.q.acquireBatch, args...).Scan(&reply); err != nil {
		fail(err)
		return
	}
	seen := 0
	for _, line := range strings.Split(strings.TrimSpace(reply), "\n") {
		ord, r, err := parseBatchLine(line)
		if err != nil || ord < 1 || ord > len(idx) {
			fail(fmt.Errorf("%w: %q", errBatchReply, line))
			return
		}
		i := idx[ord-1]
		l, err := r.result(ps[i])
		out[i] = lockprovider.BatchResult{Lease: l, Err: err}
		seen++
	}
	if seen != len(idx) {
		fail(fmt.Errorf("%w: %d answers for %d items", errBatchReply, seen, len(idx)))
	}
}

// parseBatchLine reads one line of acquire_batch's answer: the item's
// position, then mine, now, granted at, until, at least until, fence and
// tick, "-" for NULL.
func parseBatchLine(line string) (int, acquireRow, error) {
	var r acquireRow
	f := strings.Fields(line)
	if len(f) != 8 {
		return 0, r, errBatchReply
	}
	ord, err := strconv.Atoi(f[0])
	if err != nil {
		return 0, r, err
	}
	r.mine = f[1] == "1"
	if f[2] != "-" { // "-": the item was refused by a lock conflict before the clock was read
		if r.now, err = strconv.ParseInt(f[2], 10, 64); err != nil {
			return 0, r, err
		}
	}
	for k, dst := range r.nullables() {
		s := f[3+k]
		if s == "-" {
			continue
		}
		if dst.Int64, err = strconv.ParseInt(s, 10, 64); err != nil {
			return 0, r, err
		}
		dst.Valid = true
	}
	return ord, r, nil
}

// ReleaseBatch implements lockprovider.BatchReleaser in one CALL:
// Release's procedure for each item. An item whose owner did not hold
// the lease gets ErrNotHeld, as Release's does.
func (p *Provider) ReleaseBatch(ctx context.Context, ps []lockprovider.ReleaseParams) ([]error, error) {
	return batch.Release(ctx, ps, p.releaseBatch)
}

// ReleaseRunBatch implements lockprovider.BatchLedger in one CALL:
// ReleaseBatch's, which also completes each item's run row as ReleaseRun
// does.
func (p *Provider) ReleaseRunBatch(ctx context.Context, ps []lockprovider.ReleaseParams, ends []lockprovider.RunEnd) ([]error, error) {
	return batch.ReleaseRun(ctx, ps, ends, p.releaseBatch)
}

// releaseBatch sends the valid items (errs[i] nil) of a validated batch,
// with their runs' ends when ends is not nil.
func (p *Provider) releaseBatch(ctx context.Context, ps []lockprovider.ReleaseParams, ends []lockprovider.RunEnd, errs []error) {
	idx := make([]int, 0, len(ps))
	items := make([][]any, 0, len(ps))
	for i, rp := range ps {
		if errs[i] != nil {
			continue
		}
		idx = append(idx, i)
		item := []any{rp.Name, rp.Owner}
		if ends != nil {
			e := ends[i]
			item = append(item, e.Run.Token, string(e.Outcome), batontype.CutError(e.Error), e.Elapsed.Microseconds(), batontype.CutStack(e.Stack))
		}
		items = append(items, item)
	}
	if len(idx) == 0 {
		return
	}
	fail := func(err error) {
		for _, i := range idx {
			errs[i] = opError("release", ps[i].Name, err)
		}
	}
	b, err := json.Marshal(items)
	if err != nil {
		fail(err)
		return
	}
	var reply string
	if err := p.db.QueryRowContext(ctx, p.q.releaseBatch, string(b), ends != nil).Scan(&reply); err != nil {
		fail(err)
		return
	}
	held := make([]bool, len(idx))
	for _, f := range strings.Fields(reply) {
		ord, err := strconv.Atoi(f)
		if err != nil || ord < 1 || ord > len(idx) {
			fail(fmt.Errorf("%w: %q", errBatchReply, f))
			return
		}
		held[ord-1] = true
	}
	for k, i := range idx {
		if !held[k] {
			errs[i] = batontype.ErrNotHeld
		}
	}
}
