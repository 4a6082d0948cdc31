package etcd

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"go.etcd.io/etcd/api/v3/mvccpb"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/baton-go/baton/batontype"

	"github.com/baton-go/baton/lockprovider"
)

// Release announcements come from one etcd watch on the provider's prefix,
// filtered to deletions: a deleted lock or at-least key means the name may
// be free. Unlike the Redis provider's pub/sub, this also announces leases
// that etcd ended at their TTL, since etcd deletes their keys. The watch runs
// while at least one registration exists. It requires a leader, so a member
// cut off from the cluster ends it rather than stay silent; the watch is
// then reopened from the last revision seen, and all waiters are woken,
// since a release may have gone unseen.

type notifier struct {
	p       *Provider
	mu      sync.Mutex
	waiters map[string]map[*waiter]struct{} // by name
	w       *watch                          // the running watch, nil when none
}

type waiter struct{ ch chan<- struct{} }

type watch struct {
	ctx    context.Context
	cancel context.CancelFunc
	done   chan struct{} // closed when run returned
	ready  chan struct{} // closed when etcd first confirmed the watch
	once   sync.Once
}

func (n *notifier) init(p *Provider) {
	n.p = p
	n.waiters = make(map[string]map[*waiter]struct{})
}

// NotifyRelease implements lockprovider.ReleaseNotifier. It returns once
// etcd confirmed the watch, so a release after it returns is announced. It
// also announces leases that etcd ended at their TTL and at-least bounds
// that lapsed. Waiting for the confirmation is bounded by ctx and
// Config.Timeout.
func (p *Provider) NotifyRelease(ctx context.Context, name string, ch chan<- struct{}) (stop func(), err error) {
	if err := lockprovider.CheckContext(ctx); err != nil {
		return func() {}, err
	}
	if err := batontype.ValidateName(name); err != nil {
		return nil, err
	}
	if ch == nil {
		return nil, &batontype.ValidationError{Field: "ch", Value: "nil", Reason: "must not be nil", Err: batontype.ErrInvalid}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return p.notify.add(ctx, name, ch)
}

func (n *notifier) add(ctx context.Context, name string, ch chan<- struct{}) (func(), error) {
	w := &waiter{ch: ch}
	n.mu.Lock()
	set := n.waiters[name]
	if set == nil {
		set = make(map[*waiter]struct{})
		n.waiters[name] = set
	}
	set[w] = struct{}{}
	if n.w == nil {
		wctx, cancel := context.WithCancel(context.Background())
		n.w = &watch{ctx: wctx, cancel: cancel, done: make(chan struct{}), ready: make(chan struct{})}
		go n.run(n.w)
	}
	cur := n.w
	n.mu.Unlock()

	var once sync.Once
	stop := func() { once.Do(func() { n.remove(name, w) }) }
	timer := time.NewTimer(n.p.timeout)
	defer timer.Stop()
	select {
	case <-cur.ready:
		return stop, nil
	case <-ctx.Done():
		stop()
		return nil, ctx.Err()
	case <-timer.C:
		stop()
		return nil, fmt.Errorf("etcd: watch releases: %w", &batontype.UnavailableError{
			Err: errors.New("no confirmation within " + n.p.timeout.String())})
	}
}

func (n *notifier) remove(name string, w *waiter) {
	n.mu.Lock()
	set := n.waiters[name]
	delete(set, w)
	if len(set) == 0 {
		delete(n.waiters, name)
	}
	var last *watch
	if len(n.waiters) == 0 {
		last, n.w = n.w, nil
	}
	n.mu.Unlock()
	if last != nil {
		last.cancel()
		<-last.done
	}
}

func (n *notifier) run(w *watch) {
	defer close(w.done)
	var rev int64 // last revision seen; the next watch resumes after it
	backoff := 50 * time.Millisecond
	reopened := false
	for {
		opts := []clientv3.OpOption{clientv3.WithPrefix(), clientv3.WithCreatedNotify(), clientv3.WithFilterPut()}
		if rev > 0 {
			opts = append(opts, clientv3.WithRev(rev+1))
		}
		ctx, cancel := context.WithCancel(clientv3.WithRequireLeader(w.ctx))
		var werr error
		for resp := range n.p.client.Watch(ctx, n.p.prefix, opts...) {
			if err := resp.Err(); err != nil {
				werr = err
				if errors.Is(err, rpctypes.ErrCompacted) {
					rev = 0 // resume from now; the waiters are woken below
				}
				break
			}
			if resp.Created {
				w.once.Do(func() { close(w.ready) })
				if reopened {
					n.signalAll()
				}
				backoff = 50 * time.Millisecond
				continue
			}
			for _, ev := range resp.Events {
				if ev.Type == mvccpb.DELETE {
					n.signal(n.nameOf(string(ev.Kv.Key)))
				}
			}
			rev = resp.Header.Revision
		}
		cancel()
		if w.ctx.Err() != nil {
			return
		}
		n.p.log.Warn("etcd: release watch lost; reopening", "err", werr, "retry_in", backoff)
		n.signalAll()
		reopened = true
		select {
		case <-w.ctx.Done():
			return
		case <-time.After(backoff):
		}
		backoff = min(backoff*2, 2*time.Second)
	}
}

// nameOf returns the lock name of a lock or at-least key, or "" for other
// keys.
func (n *notifier) nameOf(key string) string {
	rest := strings.TrimPrefix(key, n.p.prefix)
	if name, ok := strings.CutPrefix(rest, lockDir); ok {
		return name
	}
	if name, ok := strings.CutPrefix(rest, holdDir); ok {
		return name
	}
	return ""
}

func (n *notifier) signal(name string) {
	if name == "" {
		return
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	for w := range n.waiters[name] {
		select {
		case w.ch <- struct{}{}:
		default:
		}
	}
}

func (n *notifier) signalAll() {
	n.mu.Lock()
	defer n.mu.Unlock()
	for _, set := range n.waiters {
		for w := range set {
			select {
			case w.ch <- struct{}{}:
			default:
			}
		}
	}
}
