package mysql

import (
	"context"
	"strings"
	"sync"
	"time"

	"github.com/baton-go/baton/batontype"
	"github.com/baton-go/baton/internal/check"
	"github.com/baton-go/baton/internal/clock"
	"github.com/baton-go/baton/internal/notify"
	"github.com/baton-go/baton/lockprovider"
)

// pollChunk bounds the names of one poll statement.
const pollChunk = 500

// NotifyRelease implements lockprovider.ReleaseNotifier by polling, since
// MySQL has no LISTEN/NOTIFY.
//
// A Release that ends the lease at once moves the release counter of the
// lease row it writes (column releases). The first registration of a name
// reads that counter before NotifyRelease returns; while registrations
// exist, one goroutine per Provider reads the counters of all its names
// every Config.PollInterval, in one statement (a lookup by primary key per
// name, taking no lock), and signals the waiters of each name whose
// counter moved. So a release reaches a waiter within about one
// PollInterval (a release on PostgreSQL, through LISTEN/NOTIFY, within a
// millisecond or so), and when several processes wait, the first whose
// poll comes after the release wins the name. Expiry is never announced,
// and a release that leaves the lease held until its AtLeastFor bound is
// not announced either: waiters must still poll as a fallback.
func (p *Provider) NotifyRelease(ctx context.Context, name string, ch chan<- struct{}) (stop func(), err error) {
	if stop, err := check.Watch(ctx, batontype.ValidateName(name), lockprovider.ValidateWatch(ch)); err != nil {
		return stop, err
	}
	return p.watch.add(ctx, name, ch)
}

// poller serves NotifyRelease and WatchControl.
type poller struct {
	p       *Provider
	pollSQL string           // the counters of up to pollChunk names: the prefix of an IN list
	ctlSQL  string           // the control counter, appended to every poll
	hub     notify.Hub       // keyed by lock name (or controlName)
	mu      sync.Mutex       // guards run and seen; taken after the hub's lock
	run     *pollRun         // nil while the hub has no registration
	seen    map[string]int64 // the counter last signalled, by name
}

type pollRun struct {
	cancel context.CancelFunc
	done   chan struct{}
}

func newPoller(p *Provider) *poller {
	return &poller{
		p:       p,
		pollSQL: "SELECT t.name, t.releases FROM " + p.names.Locks + " t WHERE t.name IN (",
		ctlSQL:  ") UNION ALL SELECT w.name, w.released FROM " + p.names.Waiters + " w WHERE w.name = ?",
		seen:    map[string]int64{},
	}
}

// add registers ch for name. The first registration of a name reads its
// release counter, with the caller's ctx, before add returns: a release
// after that is announced.
func (w *poller) add(ctx context.Context, name string, ch chan<- struct{}) (func(), error) {
	var first bool
	sub := w.hub.Add(name, ch, func(firstOfKey, firstOfAll bool) {
		first = firstOfKey
		if firstOfAll {
			w.mu.Lock()
			runCtx, cancel := context.WithCancel(context.Background())
			w.run = &pollRun{cancel: cancel, done: make(chan struct{})}
			go w.loop(runCtx, w.run)
			w.mu.Unlock()
		}
	})
	stop := w.hub.Stopper(sub, func(lastOfKey, last bool) func() { return w.removed(name, lastOfKey, last) })
	if first {
		counters, err := w.counters(ctx, []string{name})
		if err != nil {
			stop()
			return nil, err
		}
		w.mu.Lock()
		// Only a name without a baseline takes this one: another
		// registration's baseline must not skip a release it has not
		// seen signalled yet.
		if _, ok := w.seen[name]; !ok {
			w.seen[name] = counters[name]
		}
		w.mu.Unlock()
	}
	return stop, nil
}

// removed forgets a name with its last registration, and ends the
// goroutine with the last registration of all, waiting for it once the
// hub's lock is released (it may be signalling). It runs under the hub's
// lock, which is therefore always taken before w.mu.
func (w *poller) removed(name string, lastOfKey, last bool) func() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if lastOfKey {
		delete(w.seen, name)
	}
	if !last {
		return nil
	}
	r := w.run
	w.run = nil
	return func() {
		r.cancel()
		<-r.done
	}
}

// counters reads the counters of names, pollChunk names per statement,
// and the control counter with each. A name that was never locked has no
// row, and counts as 0.
func (w *poller) counters(ctx context.Context, names []string) (map[string]int64, error) {
	ctx, cancel := context.WithTimeout(ctx, notify.IOTimeout)
	defer cancel()
	out := make(map[string]int64, len(names))
	for len(names) > 0 {
		chunk := names[:min(len(names), pollChunk)]
		names = names[len(chunk):]
		args := make([]any, len(chunk), len(chunk)+1)
		for i, n := range chunk {
			args[i] = n
		}
		args = append(args, controlName)
		q := w.pollSQL + strings.TrimSuffix(strings.Repeat("?,", len(chunk)), ",") + w.ctlSQL
		rows, err := w.p.db.QueryContext(ctx, q, args...)
		if err != nil {
			return nil, opError("poll releases", "", err)
		}
		for rows.Next() {
			var (
				n string
				c int64
			)
			if err := rows.Scan(&n, &c); err != nil {
				rows.Close()
				return nil, opError("poll releases", "", err)
			}
			out[n] = c
		}
		err = rows.Err()
		rows.Close()
		if err != nil {
			return nil, opError("poll releases", "", err)
		}
	}
	return out, nil
}

// loop polls the counters of the registered names until ctx ends.
func (w *poller) loop(ctx context.Context, r *pollRun) {
	defer close(r.done)
	backoff := notify.Backoff{Min: w.p.poll, Max: 5 * time.Second}
	wait := w.p.poll
	for clock.Sleep(ctx, wait) {
		names := w.hub.Keys()
		if len(names) == 0 {
			continue // the last registration is being removed
		}
		got, err := w.counters(ctx, names)
		if ctx.Err() != nil {
			return
		}
		if err != nil {
			wait = backoff.Next()
			w.p.log.Warn("baton mysql: polling for releases failed; retrying", "err", err, "retry_in", wait)
			continue
		}
		backoff.Reset()
		wait = w.p.poll
		w.dispatch(names, got)
	}
}

// dispatch signals the names whose counter moved since the last poll. A
// counter that went down (an operator deleted the lease row, which the
// next grant made again) counts as moved too: the name may be free.
func (w *poller) dispatch(names []string, got map[string]int64) {
	var moved []string
	w.mu.Lock()
	for _, n := range names {
		base, ok := w.seen[n]
		if !ok {
			continue // its first read has not answered yet
		}
		if c := got[n]; c != base {
			w.seen[n] = c
			moved = append(moved, n)
		}
	}
	w.mu.Unlock()
	for _, n := range moved {
		w.hub.Signal(n)
	}
}
