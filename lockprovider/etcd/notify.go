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
	"github.com/baton-go/baton/internal/check"
	"github.com/baton-go/baton/internal/notify"
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
	p   *Provider
	hub notify.Hub // keyed by name
	w   *watch     // the running watch, nil when none; guarded by hub's lock
}

type watch struct {
	ctx    context.Context
	cancel context.CancelFunc
	done   chan struct{} // closed when run returned
	ready  chan struct{} // closed when etcd first confirmed the watch
	once   sync.Once
}

func (n *notifier) init(p *Provider) {
	n.p = p
}

// NotifyRelease implements lockprovider.ReleaseNotifier. It returns once
// etcd confirmed the watch, so a release after it returns is announced. It
// also announces leases that etcd ended at their TTL and at-least bounds
// that lapsed. Waiting for the confirmation is bounded by ctx and
// Config.Timeout.
func (p *Provider) NotifyRelease(ctx context.Context, name string, ch chan<- struct{}) (stop func(), err error) {
	if stop, err := check.LiveWatch(ctx, batontype.ValidateName(name), lockprovider.ValidateWatch(ch)); err != nil {
		return stop, err
	}
	return p.notify.add(ctx, name, ch)
}

func (n *notifier) add(ctx context.Context, name string, ch chan<- struct{}) (func(), error) {
	var cur *watch
	s := n.hub.Add(name, ch, func(_, first bool) {
		if first {
			wctx, cancel := context.WithCancel(context.Background())
			n.w = &watch{ctx: wctx, cancel: cancel, done: make(chan struct{}), ready: make(chan struct{})}
			go n.run(n.w)
		}
		cur = n.w
	})

	stop := n.hub.Stopper(s, n.removed)
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

// removed ends the watch with the last registration, and waits for its
// goroutine once the hub's lock is released.
func (n *notifier) removed(_, last bool) func() {
	if !last {
		return nil
	}
	w := n.w
	n.w = nil
	return func() {
		w.cancel()
		<-w.done
	}
}

func (n *notifier) run(w *watch) {
	defer close(w.done)
	var rev int64 // last revision seen; the next watch resumes after it
	backoff := notify.Backoff{Min: 50 * time.Millisecond, Max: 2 * time.Second}
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
					n.hub.SignalAll()
				}
				backoff.Reset()
				continue
			}
			for _, ev := range resp.Events {
				if ev.Type == mvccpb.DELETE {
					if name := n.nameOf(string(ev.Kv.Key)); name != "" {
						n.hub.Signal(name)
					}
				}
			}
			rev = resp.Header.Revision
		}
		cancel()
		if w.ctx.Err() != nil {
			return
		}
		wait := backoff.Next()
		n.p.log.Warn("etcd: release watch lost; reopening", "err", werr, "retry_in", wait)
		n.hub.SignalAll()
		reopened = true
		select {
		case <-w.ctx.Done():
			return
		case <-time.After(wait):
		}
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
