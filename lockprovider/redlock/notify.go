package redlock

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/baton-go/baton/batontype"
	"github.com/baton-go/baton/internal/check"
	"github.com/baton-go/baton/internal/notify"
	"github.com/baton-go/baton/lockprovider"
)

// Release announcements: the release script PUBLISHes on the lease key's
// name on each master where it freed the name. Every master gets one
// pub/sub connection while any registration exists; a registration is in
// effect once a majority of masters confirmed its channel, so any release
// that counted (it freed a majority) is announced on at least one
// connection that carries it. After a connection is re-established its
// channels' waiters are woken, since a release may have gone unheard.
//
// Subscribing, unsubscribing and closing run in the background, one
// writer per connection keeping them in order: go-redis holds a pub/sub
// connection's lock while it (re)connects, so a silent master would
// otherwise hold NotifyRelease and its stop function for its timeouts.

type notifier struct {
	p   *Provider
	hub notify.Hub // keyed by channel (lease key)

	// mu guards chs and subs. The hub's hooks take it under the hub's
	// lock, so it is never held while calling the hub.
	mu   sync.Mutex
	chs  map[string]*channel // by channel, while it has registrations
	subs []*subscription     // one per master; nil when there are no channels
}

type channel struct {
	confirmed map[int]bool  // masters that confirmed the subscription
	changed   chan struct{} // closed and replaced when confirmed grows
}

type subscription struct {
	ps      *goredis.PubSub
	closing chan struct{}
	done    chan struct{} // closed when the listener returned
	wrote   chan struct{} // closed when the writer returned

	mu    sync.Mutex
	queue []op          // for the writer, in order
	wake  chan struct{} // capacity 1: the queue grew
}

// op is a subscription change for a connection's writer.
type op struct {
	key       string
	subscribe bool
}

// enqueue hands o to the connection's writer.
func (s *subscription) enqueue(o op) {
	s.mu.Lock()
	s.queue = append(s.queue, o)
	s.mu.Unlock()
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

func (n *notifier) init(p *Provider) {
	n.p = p
	n.chs = make(map[string]*channel)
}

// NotifyRelease implements lockprovider.ReleaseNotifier. It returns once a
// majority of masters confirmed the subscription, or fails when that does
// not happen within ctx and Config.Timeout. A release inside the lease's
// at-least bound is announced only when the name becomes free.
func (p *Provider) NotifyRelease(ctx context.Context, name string, ch chan<- struct{}) (stop func(), err error) {
	if stop, err := check.LiveWatch(ctx, batontype.ValidateName(name), lockprovider.ValidateWatch(ch)); err != nil {
		return stop, err
	}
	return p.notify.add(ctx, p.keys(name)[0], ch)
}

func (n *notifier) add(ctx context.Context, key string, ch chan<- struct{}) (func(), error) {
	var (
		c     *channel
		fresh bool
		subs  []*subscription
	)
	reg := n.hub.Add(key, ch, func(firstOfKey, first bool) {
		n.mu.Lock()
		defer n.mu.Unlock()
		if first {
			n.subs = make([]*subscription, len(n.p.masters))
			for i, c := range n.p.masters {
				s := &subscription{ps: c.Subscribe(context.WithoutCancel(ctx)), closing: make(chan struct{}), done: make(chan struct{}),
					wrote: make(chan struct{}), wake: make(chan struct{}, 1)}
				n.subs[i] = s
				go n.listen(i, s)
				go n.write(s)
			}
		}
		if firstOfKey {
			n.chs[key] = &channel{confirmed: map[int]bool{}, changed: make(chan struct{})}
		}
		c, fresh, subs = n.chs[key], firstOfKey, n.subs
	})
	stop := n.hub.Stopper(reg, func(lastOfKey, last bool) func() { return n.removed(key, lastOfKey, last) })
	if fresh {
		for _, s := range subs {
			s.enqueue(op{key: key, subscribe: true})
		}
	}
	timer := time.NewTimer(n.p.timeout)
	defer timer.Stop()
	for {
		n.mu.Lock()
		done, changed := len(c.confirmed) >= n.p.quorum, c.changed
		n.mu.Unlock()
		if done {
			return stop, nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			stop()
			return nil, ctx.Err()
		case <-timer.C:
			stop()
			return nil, fmt.Errorf("redlock: subscribe releases: %w", &batontype.UnavailableError{
				Err: errors.New("a majority of masters did not confirm within " + n.p.timeout.String())})
		}
	}
}

// removed drops key's channel with its last registration, under the hub's
// lock; the function it returns unsubscribes key on every master, or closes
// the connections with the last channel.
func (n *notifier) removed(key string, lastOfKey, last bool) func() {
	if !lastOfKey {
		return nil
	}
	n.mu.Lock()
	delete(n.chs, key)
	subs := n.subs
	if last {
		n.subs = nil
	}
	n.mu.Unlock()
	return func() {
		for _, s := range subs {
			if !last {
				s.enqueue(op{key: key})
				continue
			}
			close(s.closing)
			go func() { // bounded by the client's timeouts
				_ = s.ps.Close()
				<-s.done
				<-s.wrote
			}()
		}
	}
}

// write applies a connection's subscription changes in order until the
// connection closes. An error is retried by the listener's reconnect,
// which resubscribes every channel of the connection.
func (n *notifier) write(s *subscription) {
	defer close(s.wrote)
	for {
		select {
		case <-s.closing:
			return
		case <-s.wake:
		}
		for {
			s.mu.Lock()
			if len(s.queue) == 0 {
				s.mu.Unlock()
				break
			}
			o := s.queue[0]
			s.queue = s.queue[1:]
			s.mu.Unlock()
			ctx, cancel := context.WithTimeout(context.Background(), n.p.timeout)
			if o.subscribe {
				_ = s.ps.Subscribe(ctx, o.key)
			} else {
				_ = s.ps.Unsubscribe(ctx, o.key)
			}
			cancel()
		}
	}
}

func (n *notifier) listen(i int, s *subscription) {
	defer close(s.done)
	backoff := notify.Backoff{Min: 50 * time.Millisecond, Max: 2 * time.Second}
	for {
		msg, err := s.ps.Receive(context.Background())
		if err != nil {
			select {
			case <-s.closing:
				return
			case <-time.After(backoff.Next()):
			}
			continue
		}
		backoff.Reset()
		switch m := msg.(type) {
		case *goredis.Message:
			n.signal(i, m.Channel, false)
		case *goredis.Subscription:
			if m.Kind == "subscribe" {
				n.signal(i, m.Channel, true)
			}
		}
	}
}

// signal wakes the waiters of key; a first confirmation from master i
// counts towards the registration's majority instead.
func (n *notifier) signal(i int, key string, confirmation bool) {
	if confirmation && n.confirm(i, key) {
		return
	}
	n.hub.Signal(key)
}

// confirm records master i's first confirmation of key; it reports whether
// this was one.
func (n *notifier) confirm(i int, key string) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	c := n.chs[key]
	if c == nil || c.confirmed[i] {
		return false
	}
	c.confirmed[i] = true
	close(c.changed)
	c.changed = make(chan struct{})
	return true
}
