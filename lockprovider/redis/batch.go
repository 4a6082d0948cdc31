package redis

import (
	"context"
	_ "embed"
	"errors"

	goredis "github.com/redis/go-redis/v9"

	"github.com/baton-go/baton/batontype"
	"github.com/baton-go/baton/internal/batch"
	"github.com/baton-go/baton/lockprovider"
)

var (
	//go:embed batch.lua
	batchTail string
	//go:embed release_batch.lua
	releaseBatchTail string
)

// batchScript is batch.lua after the ledger's tail (ledger_acquire.lua)
// wrapped as a function, so that a batch opens run records exactly as
// AcquireRun does.
var batchScript = goredis.NewScript(
	"local function ledger(KEYS, ARGV, inner)\n" + wrap("acquire", "return inner()", ledgerAcquireTail) + "\nend\n" +
		batchTail)

// releaseBatchScript is release_batch.lua after lock_release.lua as a
// function of its own KEYS and ARGV, so that every item is released by
// the single script's own text; releaseRunBatchScript the same after
// ReleaseRun's script (lock_release.lua with ledger_release.lua's tail).
var (
	releaseBatchScript = goredis.NewScript(
		"local function release(KEYS, ARGV)\n" + releaseSrc + "\nend\n" + releaseBatchTail)
	releaseRunBatchScript = goredis.NewScript(
		"local function release(KEYS, ARGV)\n" + wrap("release", releaseSrc, ledgerReleaseTail) + "\nend\n" + releaseBatchTail)
)

// AcquireBatch implements lockprovider.BatchAcquirer. On a single node
// (a *goredis.Client, Sentinel included) the batch is one script call. On
// a Cluster the items are grouped by hash slot, one script call per slot,
// all sent in one pipeline (go-redis sends each node its part at once).
// On a Ring, or a Client of another type, each item is its own script
// call in one pipeline, since shards there need not follow slots.
func (p *Provider) AcquireBatch(ctx context.Context, ps []lockprovider.AcquireParams) ([]lockprovider.BatchResult, error) {
	return batch.Acquire(ctx, ps, p.batch)
}

// AcquireRunBatch implements lockprovider.BatchLedger in the same calls as
// AcquireBatch: each grant also opens its run record as AcquireRun does.
func (p *Provider) AcquireRunBatch(ctx context.Context, ps []lockprovider.AcquireParams, run lockprovider.RunStart) ([]lockprovider.BatchResult, error) {
	return batch.AcquireRun(ctx, ps, run, p.batch)
}

// batchGroup is the items of one script call.
type batchGroup struct {
	idx  []int // indexes into the batch
	keys []string
	args []any
	cmd  *goredis.Cmd
}

// grouper assigns the items of a batch to script calls: all to one on a
// single node (a *goredis.Client, Sentinel included), one per hash slot
// on a Cluster, and one per item on a Ring or a Client of another type,
// since shards there need not follow slots.
type grouper struct {
	cluster, single bool
	head            []any // the ARGV that every call starts with
	groups          map[int]*batchGroup
	order           []*batchGroup
	// The sizes of a single node's one group, allocated at once: growing
	// its slices by appends would leave as much garbage again as they
	// hold, on every batch.
	items, keysPer, argsPer int
}

// grouper returns the grouper of a batch of items, each with keysPer keys
// and argsPer arguments after head.
func (p *Provider) grouper(head []any, items, keysPer, argsPer int) *grouper {
	g := &grouper{head: head, groups: map[int]*batchGroup{}, items: items, keysPer: keysPer, argsPer: argsPer}
	_, g.cluster = p.client.(*goredis.ClusterClient)
	_, g.single = p.client.(*goredis.Client)
	return g
}

// add puts item i, whose lease key is lease, in its group and returns the
// group, for the caller to append the item's keys and arguments.
func (g *grouper) add(i int, lease string) *batchGroup {
	key := 0 // one group on a single node
	switch {
	case g.cluster:
		key = int(slot(lease))
	case !g.single:
		key = i
	}
	bg := g.groups[key]
	if bg == nil {
		bg = &batchGroup{}
		n := 1 // a group's items: a slot's share is not known ahead
		if g.single {
			n = g.items
		}
		bg.idx = make([]int, 0, n)
		bg.keys = make([]string, 0, n*g.keysPer)
		bg.args = append(make([]any, 0, len(g.head)+n*g.argsPer), g.head...)
		g.groups[key] = bg
		g.order = append(g.order, bg)
	}
	bg.idx = append(bg.idx, i)
	return bg
}

// batch sends the valid items (out[i].Err nil) of a validated batch and
// fills in their results.
func (p *Provider) batch(ctx context.Context, ps []lockprovider.AcquireParams, run *lockprovider.RunStart, out []lockprovider.BatchResult) {
	head := []any{p.recordTTLArg, 3, "", 0, 0}
	if run != nil {
		maxRecs, maxAge, listTTL := retentionArgs(run.Retention)
		head = []any{p.recordTTLArg, 4, listTTL, maxRecs, maxAge}
	}
	keysPer := 3
	if run != nil {
		keysPer = 4
	}
	gr := p.grouper(head, len(ps), keysPer, 4)
	for i, ap := range ps {
		if out[i].Err != nil {
			continue
		}
		lease, fence := p.keys(ap.Name)
		g := gr.add(i, lease)
		var tick int64
		tickKey := lease
		if !ap.Tick.IsZero() {
			tick, tickKey = ap.Tick.UnixMilli(), p.tickKey(lease)
		}
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
	order := gr.order
	p.runGroups(ctx, batchScript, order)
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
}

// ReleaseBatch implements lockprovider.BatchReleaser in the calls that
// AcquireBatch would make for the same names: one script call on a single
// node, one per hash slot in one pipeline on a Cluster.
func (p *Provider) ReleaseBatch(ctx context.Context, ps []lockprovider.ReleaseParams) ([]error, error) {
	return batch.Release(ctx, ps, p.releaseBatch)
}

// ReleaseRunBatch implements lockprovider.BatchLedger in the same calls as
// ReleaseBatch: each item is ReleaseRun's script.
func (p *Provider) ReleaseRunBatch(ctx context.Context, ps []lockprovider.ReleaseParams, ends []lockprovider.RunEnd) ([]error, error) {
	return batch.ReleaseRun(ctx, ps, ends, p.releaseBatch)
}

// releaseBatch sends the valid items (errs[i] nil) of a validated batch,
// with their runs' ends when ends is not nil.
func (p *Provider) releaseBatch(ctx context.Context, ps []lockprovider.ReleaseParams, ends []lockprovider.RunEnd, errs []error) {
	script, head, keysPer, argsPer := releaseBatchScript, []any{1}, 1, 1 // head: keys per item
	if ends != nil {
		script, head, keysPer, argsPer = releaseRunBatchScript, []any{2}, 2, 4 // releaseRunArgs
	}
	gr := p.grouper(head, len(ps), keysPer, argsPer)
	for i, rp := range ps {
		if errs[i] != nil {
			continue
		}
		lease := p.key(rp.Name)
		g := gr.add(i, lease)
		if ends == nil {
			g.keys = append(g.keys, lease)
			g.args = append(g.args, rp.Owner)
			continue
		}
		g.keys = append(g.keys, lease, lease+runsSuffix)
		g.args = append(g.args, releaseRunArgs(rp.Owner, ends[i])...)
	}
	p.runGroups(ctx, script, gr.order)
	for _, g := range gr.order {
		v, err := g.cmd.Result()
		replies, ok := v.([]any)
		if err == nil && (!ok || len(replies) != len(g.idx)) {
			err = unexpected(v)
		}
		for j, i := range g.idx {
			if err != nil {
				errs[i] = unknown("release", ps[i].Name, err)
				continue
			}
			switch n, _ := replies[j].(int64); n {
			case 1:
			case 0:
				errs[i] = batontype.ErrNotHeld
			default:
				errs[i] = unknown("release", ps[i].Name, unexpected(replies[j]))
			}
		}
	}
}

// pipeliner is implemented by every go-redis client.
type pipeliner interface {
	Pipeline() goredis.Pipeliner
}

// runGroups sends one script call per group: alone when there is one,
// otherwise in one pipeline. Calls the server answers with NOSCRIPT (a
// node that has not seen the script yet) are sent again with the script's
// text, in a second pipeline.
func (p *Provider) runGroups(ctx context.Context, script *goredis.Script, groups []*batchGroup) {
	pl, ok := p.client.(pipeliner)
	if len(groups) == 1 || !ok {
		for _, g := range groups {
			g.cmd = script.Run(ctx, p.client, g.keys, g.args...)
		}
		return
	}
	pipe := pl.Pipeline()
	for _, g := range groups {
		g.cmd = script.EvalSha(ctx, pipe, g.keys, g.args...)
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
		g.cmd = script.Eval(ctx, pipe, g.keys, g.args...)
	}
	_, _ = pipe.Exec(ctx)
}

func noScript(err error) bool {
	return errors.Is(err, goredis.ErrNoScript) || goredis.HasErrorPrefix(err, "NOSCRIPT")
}
