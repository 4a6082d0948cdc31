package redis

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/baton-go/baton/batontype"
	"github.com/baton-go/baton/internal/check"
	"github.com/baton-go/baton/internal/keyspace"
	"github.com/baton-go/baton/internal/ratewire"
	"github.com/baton-go/baton/lockprovider"
)

var (
	//go:embed ledger_acquire.lua
	ledgerAcquireTail string
	//go:embed ledger_release.lua
	ledgerReleaseTail string
	//go:embed ledger_runs.lua
	ledgerRunsSrc string
	//go:embed admin.lua
	adminSrc string
	//go:embed registry.lua
	registrySrc string
)

// The ledger scripts wrap the lease scripts' own text in a function and
// append the ledger work, so the lease logic exists once. They are shared
// by every Provider: a script is identified by its SHA1 only.
var (
	ledgerAcquireScript     = goredis.NewScript(wrap("acquire", acquireSrc, ledgerAcquireTail))
	ledgerAcquireTickScript = goredis.NewScript(wrap("acquire", acquireTickSrc, ledgerAcquireTail))
	ledgerReleaseScript     = goredis.NewScript(wrap("release", releaseSrc, ledgerReleaseTail))
	ledgerRunsScript        = goredis.NewScript(ledgerRunsSrc)
	adminScript             = goredis.NewScript(adminSrc)
	registryScript          = goredis.NewScript(registrySrc)
)

func wrap(fn, body, tail string) string {
	return "local function " + fn + "()\n" + body + "\nend\n" + tail
}

// runsSuffix names the run list of a job, next to the lease key in the
// name's slot.
const runsSuffix = ":r"

// ForceRelease implements lockprovider.Admin in one script call, which
// also records the release on the name's run list, if it has one.
func (p *Provider) ForceRelease(ctx context.Context, fp lockprovider.ForceReleaseParams) (batontype.LeaseInfo, error) {
	if err := check.Args(ctx, fp.Validate()); err != nil {
		return batontype.LeaseInfo{}, err
	}
	name := fp.Name
	lease, fence := p.keys(name)
	v, err := adminScript.Run(ctx, p.client, []string{lease, fence, lease + runsSuffix}, "force", fp.Token, fp.By).Result()
	if err != nil {
		return batontype.LeaseInfo{}, unknown("force-release", name, err)
	}
	if v == int64(0) {
		return batontype.LeaseInfo{}, batontype.ErrNotHeld
	}
	if a, ok := v.([]any); ok && len(a) == 3 {
		f, ok1 := keyspace.Int(a[0])
		s, ok2 := a[1].(string)
		until, ok3 := keyspace.Int(a[2])
		if pl, ok := parseLease(s, until); ok && ok1 && ok2 && ok3 {
			return batontype.LeaseInfo{
				Name: name, Exists: true, Held: true, LockedBy: pl.lockedBy,
				GrantedAt: pl.granted, Until: time.UnixMilli(until), Token: f, LastTick: pl.tick,
				AtLeastUntil: lockprovider.MinHold(pl.granted, pl.atLeastUntil),
			}, nil
		}
	}
	return batontype.LeaseInfo{}, unknown("force-release", name, unexpected(v))
}

// Ping implements lockprovider.Admin.
func (p *Provider) Ping(ctx context.Context) error {
	if err := lockprovider.CheckContext(ctx); err != nil {
		return err
	}
	if err := adminScript.Run(ctx, p.client, []string{p.prefix + "ping"}, "ping").Err(); err != nil {
		return opError("ping", "", err)
	}
	return nil
}

// rateKeyBase is the common start of the keys of one rate-limit key, as
// rateArgs builds them.
func (p *Provider) rateKeyBase(key string) string {
	if strings.ContainsAny(key, "%}") {
		key = strings.NewReplacer("%", "%25", "}", "%7D").Replace(key)
	}
	return p.prefix + "rl:{" + key + "}:"
}

// ResetRate implements lockprovider.Admin. The key's limits are unknown
// (their IDs depend on the application's limits), so it first SCANs for
// them, then deletes them in one script call; SCAN costs O(keys) on the
// server, like List.
func (p *Provider) ResetRate(ctx context.Context, key string) error {
	if err := check.Args(ctx, batontype.ValidateName(key)); err != nil {
		return err
	}
	keys, err := p.scanKeys(ctx, globEscape(p.rateKeyBase(key))+"*")
	if err != nil {
		return opError("reset rate", key, err)
	}
	if len(keys) == 0 {
		return nil
	}
	if err := adminScript.Run(ctx, p.client, keys, "del").Err(); err != nil {
		return opError("reset rate", key, err)
	}
	return nil
}

// ListRates implements lockprovider.RateLister: a SCAN and one script call
// per key. Meant for operators, not for hot paths.
func (p *Provider) ListRates(ctx context.Context) ([]batontype.RateInfo, error) {
	if err := lockprovider.CheckContext(ctx); err != nil {
		return nil, err
	}
	base := p.prefix + "rl:{"
	keys, err := p.scanKeys(ctx, globEscape(base)+"*")
	if err != nil {
		return nil, opError("list rates", "", err)
	}
	var out []batontype.RateInfo
	for _, k := range keys {
		rest := strings.TrimPrefix(k, base)
		i := strings.LastIndex(rest, "}:")
		if i < 0 {
			continue
		}
		a, per, ok := ratewire.ParseID(rest[i+2:])
		if !ok {
			continue
		}
		name := rest[:i]
		if strings.Contains(name, "%") {
			name = strings.NewReplacer("%25", "%", "%7D", "}").Replace(name)
		}
		exp, err := adminScript.Run(ctx, p.client, []string{k}, "ttl").Int64()
		if err != nil {
			return nil, opError("list rates", "", err)
		}
		if exp < 0 {
			continue // gone since the scan
		}
		out = append(out, batontype.RateInfo{Key: name, Algorithm: a, Period: per, ResetAt: time.UnixMilli(exp)})
	}
	slices.SortFunc(out, func(a, b batontype.RateInfo) int {
		if c := strings.Compare(a.Key, b.Key); c != 0 {
			return c
		}
		return int(a.Algorithm) - int(b.Algorithm)
	})
	return out, nil
}

// scanKeys SCANs every master (or shard) for keys matching the glob.
func (p *Provider) scanKeys(ctx context.Context, match string) ([]string, error) {
	var (
		out  []string
		seen = make(map[string]bool)
	)
	scan := func(ctx context.Context, c scanner) error {
		var cursor uint64
		for {
			keys, next, err := c.Scan(ctx, cursor, match, 1000).Result()
			if err != nil {
				return err
			}
			for _, k := range keys {
				if !seen[k] {
					seen[k] = true
					out = append(out, k)
				}
			}
			if next == 0 {
				return nil
			}
			cursor = next
		}
	}
	var err error
	switch c := p.client.(type) {
	case interface {
		ForEachMaster(context.Context, func(context.Context, *goredis.Client) error) error
	}:
		err = forEachSerial(ctx, c.ForEachMaster, scan)
	case interface {
		ForEachShard(context.Context, func(context.Context, *goredis.Client) error) error
	}:
		err = forEachSerial(ctx, c.ForEachShard, scan)
	default:
		err = scan(ctx, p.client)
	}
	return out, err
}

func flags(catchUp, manual bool) string {
	switch {
	case catchUp && manual:
		return "cm"
	case catchUp:
		return "c"
	case manual:
		return "m"
	}
	return ""
}

// AcquireRun implements lockprovider.Ledger: Acquire's own script with the
// run's start record pushed onto the job's run list, in one call.
func (p *Provider) AcquireRun(ctx context.Context, ap lockprovider.AcquireParams, run lockprovider.RunStart) (batontype.Lease, error) {
	if err := check.Args(ctx, ap.Validate(), run.Validate()); err != nil {
		return batontype.Lease{}, err
	}
	lease, fence := p.keys(ap.Name)
	var tick int64
	if !ap.Tick.IsZero() {
		tick = ap.Tick.UnixMilli()
	}
	atMost, atLeast := ap.AtMostFor.Milliseconds(), ap.AtLeastFor.Milliseconds()
	value := leaseValue(ap.Owner, ap.LockedBy, atMost, atLeast, tick)
	// The record's rest: the script puts the token and the grant time
	// before it.
	rest := runRest(tick, run.CatchUp, run.Manual, ap.LockedBy)
	maxRecs, maxAge, listTTL := retentionArgs(run.Retention)
	runs := lease + runsSuffix
	sent := time.Now()
	ttlArg := p.lists.arg(runs, listTTL, sent)
	var cmd *goredis.Cmd
	if tick == 0 {
		cmd = ledgerAcquireScript.Run(ctx, p.client, []string{lease, fence, runs},
			value, atMost, p.recordTTLArg, rest, maxRecs, maxAge, ttlArg)
	} else {
		cmd = ledgerAcquireTickScript.Run(ctx, p.client, []string{lease, fence, p.tickKey(lease), runs},
			value, atMost, p.recordTTLArg, tick, rest, maxRecs, maxAge, ttlArg)
	}
	l, err := acquireReply(cmd, ap, tick, atMost, atLeast)
	if err == nil && ttlArg > 0 {
		p.lists.set(runs, listTTL, sent)
	}
	return l, err
}

// retentionArgs are ledger_acquire.lua's retention arguments: the records
// the list keeps (a run that ended has two, see ledger_acquire.lua), the
// age, and the list's expiry (the age and a sixteenth), in ms.
func retentionArgs(r batontype.Retention) (maxRecords int, maxAge, listTTL int64) {
	r = r.WithDefaults()
	maxAge = r.MaxAge.Milliseconds()
	return 2*r.MaxRuns - 1, maxAge, maxAge + maxAge/16
}

// listTTLs remembers when this Provider last set the expiry of each run
// list (see ledger_acquire.lua), so that a claim sets it only once in a
// sixteenth of the retention age: one call fewer for most claims.
type listTTLs struct {
	mu sync.Mutex
	at map[string]listTTL
}

type listTTL struct {
	sent time.Time // before the call that set it (monotonic)
	ttl  int64     // ms
}

// maxListTTLs bounds the memory of listTTLs: past it, it starts over,
// which costs each list one more expiry.
const maxListTTLs = 10_000

// arg is the expiry argument for the list key: ttl, or -ttl when this
// Provider set the same expiry less than a sixteenth of the age ago (ttl
// is 17 sixteenths of the age), so that the list outlives every record
// pushed since by the age.
func (l *listTTLs) arg(key string, ttl int64, now time.Time) int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	if e, ok := l.at[key]; ok && e.ttl == ttl && now.Sub(e.sent) < time.Duration(ttl/17)*time.Millisecond {
		return -ttl
	}
	return ttl
}

// set records that the call sent at sent set the list's expiry to ttl.
func (l *listTTLs) set(key string, ttl int64, sent time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.at == nil || len(l.at) >= maxListTTLs {
		l.at = make(map[string]listTTL)
	}
	l.at[key] = listTTL{sent: sent, ttl: ttl}
}

// runRest is the part of a run record after its token and start:
// "tick ms\nflags\nlockedBy". ledger_acquire.lua puts the token and the
// grant time before it; releaseRunArgs builds the same.
func runRest(tick int64, catchUp, manual bool, lockedBy string) string {
	return strconv.FormatInt(tick, 10) + "\n" + flags(catchUp, manual) + "\n" + lockedBy
}

// releaseRunArgs are ledger_release.lua's ARGV for owner and end: the
// owner, then the run's end record in three parts around its finished
// time. The finished time is the run's start plus end.Elapsed, or left to
// the server's clock when the caller did not measure it.
func releaseRunArgs(owner string, end lockprovider.RunEnd) []any {
	r := end.Run
	var tick int64
	if !r.Tick.IsZero() {
		tick = r.Tick.UnixMilli()
	}
	fin := ""
	if f, ok := end.Finished(); ok {
		fin = strconv.FormatInt(f.UnixMilli(), 10)
	}
	// A stack follows the error text, which is then prefixed with its
	// length: flag "s" (see parseRecord).
	fl, text := flags(r.CatchUp, r.Manual), batontype.CutError(end.Error)
	if st := batontype.CutStack(end.Stack); st != "" {
		fl, text = fl+"s", strconv.Itoa(len(text))+"\n"+text+st
	}
	return []any{owner,
		strconv.FormatInt(r.Token, 10) + "\n" + strconv.FormatInt(r.Started.UnixMilli(), 10) + "\n" +
			strconv.FormatInt(tick, 10) + "\n" + fl + "\n" + r.LockedBy + "\n",
		fin,
		"\n" + string(end.Outcome) + "\n" + text}
}

// ReleaseRun implements lockprovider.Ledger: Release's own script with the
// run's end record pushed, in one call.
func (p *Provider) ReleaseRun(ctx context.Context, rp lockprovider.ReleaseParams, end lockprovider.RunEnd) error {
	if err := check.Args(ctx, rp.Validate(), end.Validate()); err != nil {
		return err
	}
	lease := p.key(rp.Name)
	n, err := ledgerReleaseScript.Run(ctx, p.client, []string{lease, lease + runsSuffix}, releaseRunArgs(rp.Owner, end)...).Int64()
	switch {
	case err != nil:
		return unknown("release", rp.Name, err)
	case n == 0:
		return batontype.ErrNotHeld
	}
	return nil
}

// readRuns reads a job's runs, newest start first, in one script call.
// Each run is its start record with the newest end record of its token,
// if any, and the release record ForceRelease pushed for it, if any; an
// end or release record without its start record (trimmed while the run
// ran) is not a run.
func (p *Provider) readRuns(ctx context.Context, job string) ([]batontype.RunRecord, error) {
	recs, err := ledgerRunsScript.Run(ctx, p.client, []string{p.key(job) + runsSuffix}).StringSlice()
	if err != nil {
		return nil, opError("runs of", job, err)
	}
	runs := make([]batontype.RunRecord, 0, len(recs)/2+1)
	var ends, releases map[int64]batontype.RunRecord
	for _, s := range recs {
		rec, kind, ok := parseRecord(job, s)
		switch {
		case !ok:
			return nil, fmt.Errorf("redis: runs of %q: %w", job, unexpected(s))
		case kind == recStart:
			runs = append(runs, rec)
		case kind == recEnd:
			ends = keepFirst(ends, rec) // the list is newest first
		default:
			releases = keepFirst(releases, rec)
		}
	}
	for i, r := range runs {
		if e, ok := ends[r.Token]; ok {
			runs[i].Finished, runs[i].Outcome, runs[i].Error, runs[i].Stack = e.Finished, e.Outcome, e.Error, e.Stack
		}
		if e, ok := releases[r.Token]; ok {
			runs[i].ReleasedBy, runs[i].ReleasedAt = e.ReleasedBy, e.ReleasedAt
		}
	}
	slices.SortStableFunc(runs, func(a, b batontype.RunRecord) int { return b.Started.Compare(a.Started) })
	return runs, nil
}

func msTime(s string) time.Time {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n == 0 {
		return time.Time{}
	}
	return time.UnixMilli(n)
}

// keepFirst adds rec to m under its token unless one is there already.
func keepFirst(m map[int64]batontype.RunRecord, rec batontype.RunRecord) map[int64]batontype.RunRecord {
	if m == nil {
		m = make(map[int64]batontype.RunRecord)
	}
	if _, ok := m[rec.Token]; !ok {
		m[rec.Token] = rec
	}
	return m
}

// Kinds of run-list records.
const (
	recStart   = iota // pushed by the claim (ledger_acquire.lua)
	recEnd            // pushed by the release (ledger_release.lua)
	recRelease        // pushed by a force-release (admin.lua)
)

// parseRecord decodes a run record (see ledger_acquire.lua): token,
// started, tick, flags, lockedBy, and for an end record finished,
// outcome, error; or a force-release's record (see admin.lua): token,
// released, by.
func parseRecord(job, s string) (rec batontype.RunRecord, kind int, ok bool) {
	f := strings.SplitN(s, "\n", 8)
	var err error
	if len(f) == 3 {
		rec = batontype.RunRecord{Job: job, ReleasedAt: msTime(f[1]), ReleasedBy: f[2]}
		rec.Token, err = strconv.ParseInt(f[0], 10, 64)
		return rec, recRelease, err == nil
	}
	if len(f) != 5 && len(f) != 8 {
		return rec, 0, false
	}
	rec = batontype.RunRecord{Job: job, Started: msTime(f[1]), Tick: msTime(f[2]), LockedBy: f[4],
		CatchUp: strings.Contains(f[3], "c"), Manual: strings.Contains(f[3], "m")}
	if rec.Token, err = strconv.ParseInt(f[0], 10, 64); err != nil {
		return rec, 0, false
	}
	if len(f) == 5 {
		return rec, recStart, true
	}
	rec.Finished, rec.Outcome, rec.Error = msTime(f[5]), batontype.Outcome(f[6]), f[7]
	if strings.Contains(f[3], "s") { // "<error length>\n<error><stack>"
		n, text, found := strings.Cut(f[7], "\n")
		k, err := strconv.Atoi(n)
		if !found || err != nil || k < 0 || k > len(text) {
			return rec, 0, false
		}
		rec.Error, rec.Stack = text[:k], text[k:]
	}
	return rec, recEnd, true
}

// Runs implements lockprovider.Ledger in one script call. The list holds
// at most the retention's MaxRuns records, which bounds the work.
func (p *Provider) Runs(ctx context.Context, q batontype.RunQuery) ([]batontype.RunRecord, error) {
	if err := check.Args(ctx, q.Validate()); err != nil {
		return nil, err
	}
	runs, err := p.readRuns(ctx, q.Job)
	if err != nil {
		return nil, err
	}
	out := runs[:0]
	for _, r := range runs {
		if (q.Since.IsZero() || !r.Started.Before(q.Since)) && (q.Until.IsZero() || r.Started.Before(q.Until)) {
			out = append(out, r)
		}
	}
	if len(out) > q.Lim() {
		out = out[:q.Lim()]
	}
	return out, nil
}

// LastRuns implements lockprovider.Ledger in one script call.
func (p *Provider) LastRuns(ctx context.Context, job string) (last, lastSuccess batontype.RunRecord, err error) {
	if err := check.Args(ctx, batontype.ValidateName(job)); err != nil {
		return last, lastSuccess, err
	}
	runs, err := p.readRuns(ctx, job)
	if err != nil {
		return last, lastSuccess, err
	}
	if len(runs) > 0 {
		last = runs[0]
	}
	for _, r := range runs {
		if r.Outcome == batontype.OutcomeSucceeded {
			return last, r, nil
		}
	}
	return last, lastSuccess, nil
}

// registryKeys are the registry's keys, in one slot of their own.
func (p *Provider) registryKeys() []string {
	base := p.prefix + "registry:{baton}"
	return []string{base, base + ":e", base + ":h", base + ":d", base + ":l"}
}

// keep is the registry script's retention of departed entries, in ms.
var keep = batontype.DepartedRetention.Milliseconds()

// Register implements lockprovider.Registry in one script call.
func (p *Provider) Register(ctx context.Context, inst batontype.Instance, ttl time.Duration) error {
	b, err := check.Register(ctx, inst, ttl)
	if err != nil {
		return err
	}
	if err := registryScript.Run(ctx, p.client, p.registryKeys(), "reg", inst.LockedBy, b, ttl.Milliseconds(), keep).Err(); err != nil {
		return opError("register", inst.LockedBy, err)
	}
	return nil
}

// Heartbeat implements lockprovider.Registry in one script call.
func (p *Provider) Heartbeat(ctx context.Context, lockedBy string, ttl time.Duration) error {
	if err := check.Args(ctx, batontype.ValidateLockedBy(lockedBy), batontype.ValidateRegistryTTL(ttl)); err != nil {
		return err
	}
	v, err := registryScript.Run(ctx, p.client, p.registryKeys(), "hb", lockedBy, "", ttl.Milliseconds(), keep).Result()
	if err != nil {
		return opError("heartbeat", lockedBy, err)
	}
	if v == int64(0) {
		return batontype.ErrNotRegistered
	}
	return nil
}

// Deregister implements lockprovider.Registry in one script call.
func (p *Provider) Deregister(ctx context.Context, lockedBy string) error {
	if err := check.Args(ctx, batontype.ValidateLockedBy(lockedBy)); err != nil {
		return err
	}
	if err := registryScript.Run(ctx, p.client, p.registryKeys(), "del", lockedBy, "", 0, keep).Err(); err != nil {
		return opError("deregister", lockedBy, err)
	}
	return nil
}

// Instances implements lockprovider.Registry in one script call.
func (p *Provider) Instances(ctx context.Context) ([]batontype.Instance, error) {
	ds, err := p.registryList(ctx, "list", "instances", 4)
	out := make([]batontype.Instance, 0, len(ds))
	for _, d := range ds {
		out = append(out, d.Instance)
	}
	return out, err
}

// Departed implements lockprovider.Departures in one script call.
func (p *Provider) Departed(ctx context.Context) ([]batontype.Departed, error) {
	return p.registryList(ctx, "departed", "departed", 5)
}

// registryList reads the entries of the registry script's op, each of
// width fields: id, until (or departure), heartbeat, JSON and, for
// departed ones, whether it left.
func (p *Provider) registryList(ctx context.Context, op, what string, width int) ([]batontype.Departed, error) {
	if err := lockprovider.CheckContext(ctx); err != nil {
		return nil, err
	}
	v, err := registryScript.Run(ctx, p.client, p.registryKeys(), op, "", "", 0, keep).Slice()
	if err != nil {
		return nil, opError(what, "", err)
	}
	if len(v) == 0 || (len(v)-1)%width != 0 {
		return nil, fmt.Errorf("redis: %s: %w", what, unexpected(v))
	}
	var out []batontype.Departed
	for i := 1; i < len(v); i += width {
		id, _ := v[i].(string)
		until, ok1 := keyspace.Int(v[i+1])
		hb, ok2 := keyspace.Int(v[i+2])
		js, _ := v[i+3].(string)
		var d batontype.Departed
		if !ok1 || !ok2 || js == "" {
			continue // removed between the reads of one script: cannot happen, but do not fail a listing
		}
		if err := json.Unmarshal([]byte(js), &d.Instance); err != nil {
			return nil, opError(what+": entry", id, err)
		}
		d.LockedBy, d.Heartbeat, d.Until = id, time.UnixMilli(hb), time.UnixMilli(until)
		d.Left = width > 4 && v[i+4] == "1"
		out = append(out, d)
	}
	slices.SortFunc(out, func(a, b batontype.Departed) int { return strings.Compare(a.LockedBy, b.LockedBy) })
	return out, nil
}
