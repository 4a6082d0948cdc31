package redis

import (
	"context"
	_ "embed"
	"errors"

	goredis "github.com/redis/go-redis/v9"

	"github.com/baton-go/baton/lockprovider"
)

//go:embed batch.lua
var batchTail string

// batchScript is batch.lua after the ledger's tail (ledger_acquire.lua)
// wrapped as a function, so that a batch opens run records exactly as
// AcquireRun does.
var batchScript = goredis.NewScript(
	"local function ledger(KEYS, ARGV, inner)\n" + wrap("acquire", "return inner()", ledgerAcquireTail) + "\nend\n" +
		batchTail)

var (
	_ lockprovider.BatchAcquirer = (*Provider)(nil)
	_ lockprovider.BatchLedger   = (*Provider)(nil)
)

// AcquireBatch implements lockprovider.BatchAcquirer. On a single node
// (a *goredis.Client, Sentinel included) the batch is one script call. On
// a Cluster the items are grouped by hash slot, one script call per slot,
// all sent in one pipeline (go-redis sends each node its part at once).
// On a Ring, or a Client of another type, each item is its own script
// call in one pipeline, since shards there need not follow slots.
func (p *Provider) AcquireBatch(ctx context.Context, ps []lockprovider.AcquireParams) ([]lockprovider.BatchResult, error) {
	return p.batch(ctx, ps, nil)
}

// AcquireRunBatch implements lockprovider.BatchLedger in the same calls as
// AcquireBatch: each grant also opens its run record as AcquireRun does.
func (p *Provider) AcquireRunBatch(ctx context.Context, ps []lockprovider.AcquireParams, run lockprovider.RunStart) ([]lockprovider.BatchResult, error) {
	if err := run.Validate(); err != nil {
		return nil, err
	}
	return p.batch(ctx, ps, &run)
}

// batchGroup is the items of one script call.
type batchGroup struct {
	idx  []int // indexes into the batch
	keys []string
	args []any
	cmd  *goredis.Cmd
}

func (p *Provider) batch(ctx context.Context, ps []lockprovider.AcquireParams, run *lockprovider.RunStart) ([]lockprovider.BatchResult, error) {
	itemErrs, err := lockprovider.ValidateBatch(ps)
	if err != nil || len(ps) == 0 {
		return nil, err
	}
	out := make([]lockprovider.BatchResult, len(ps))
	head := []any{p.recordTTLArg, 3, "", 0, 0}
	if run != nil {
		maxRecs, maxAge, listTTL := retentionArgs(run.Retention)
		head = []any{p.recordTTLArg, 4, listTTL, maxRecs, maxAge}
	}
	groups := map[int]*batchGroup{}
	var order []*batchGroup
	_, cluster := p.client.(*goredis.ClusterClient)
	_, single := p.client.(*goredis.Client)
	for i, ap := range ps {
		if itemErrs[i] != nil {
			out[i].Err = itemErrs[i]
			continue
		}
		lease, fence := p.keys(ap.Name)
		key := 0 // one group on a single node
		switch {
		case cluster:
			key = int(slot(lease))
		case !single:
			key = i
		}
		g := groups[key]
		if g == nil {
			g = &batchGroup{args: append([]any(nil), head...)}
			groups[key] = g
			order = append(order, g)
		}
		var tick int64
		tickKey := lease
		if !ap.Tick.IsZero() {
			tick, tickKey = ap.Tick.UnixMilli(), p.tickKey(lease)
		}
		g.idx = append(g.idx, i)
		g.keys = append(g.keys, lease, fence, tickKey)
		if run != nil {
			g.keys = append(g.keys, lease+runsSuffix)
		}
		atMost, atLeast := ap.AtMostFor.Milliseconds(), ap.AtLeastFor.Milliseconds()
		rest := "" // the run record's rest, as AcquireRun sends it
		if run != nil {
			rest = runRest(tick, run.CatchUp, run.Manual, ap.LockedBy)
		}
		g.args = append(g.args, leaseValue(ap.Owner, ap.LockedBy, atMost, atLeast, tick), atMost, tick, rest)
	}
	p.runGroups(ctx, order)
	for _, g := range order {
		v, err := g.cmd.Result()
		var replies []any
		if err == nil {
			var ok bool
			if replies, ok = v.([]any); !ok || len(replies) != len(g.idx) {
				err = unexpected(v)
			}
		}
		for j, i := range g.idx {
			ap := ps[i]
			if err != nil {
				out[i].Err = unknown("acquire", ap.Name, err)
				continue
			}
			var tick int64
			if !ap.Tick.IsZero() {
				tick = ap.Tick.UnixMilli()
			}
			out[i].Lease, out[i].Err = decodeAcquire(replies[j], ap, tick, ap.AtMostFor.Milliseconds(), ap.AtLeastFor.Milliseconds())
		}
	}
	return out, nil
}

// pipeliner is implemented by every go-redis client.
type pipeliner interface {
	Pipeline() goredis.Pipeliner
}

// runGroups sends one script call per group: alone when there is one,
// otherwise in one pipeline. Calls the server answers with NOSCRIPT (a
// node that has not seen the script yet) are sent again with the script's
// text, in a second pipeline.
func (p *Provider) runGroups(ctx context.Context, groups []*batchGroup) {
	pl, ok := p.client.(pipeliner)
	if len(groups) == 1 || !ok {
		for _, g := range groups {
			g.cmd = batchScript.Run(ctx, p.client, g.keys, g.args...)
		}
		return
	}
	pipe := pl.Pipeline()
	for _, g := range groups {
		g.cmd = batchScript.EvalSha(ctx, pipe, g.keys, g.args...)
	}
	_, _ = pipe.Exec(ctx) // errors are per command
	var again []*batchGroup
	for _, g := range groups {
		if err := g.cmd.Err(); err != nil && noScript(err) {
			again = append(again, g)
		}
	}
	if len(again) == 0 {
		return
	}
	pipe = pl.Pipeline()
	for _, g := range again {
		g.cmd = batchScript.Eval(ctx, pipe, g.keys, g.args...)
	}
	_, _ = pipe.Exec(ctx)
}

func noScript(err error) bool {
	return errors.Is(err, goredis.ErrNoScript) || goredis.HasErrorPrefix(err, "NOSCRIPT")
}
