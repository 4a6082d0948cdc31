package redis

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"strconv"
	"strings"
	"sync"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/baton-go/baton/batontype"
	"github.com/baton-go/baton/internal/check"
	"github.com/baton-go/baton/internal/notify"
	"github.com/baton-go/baton/lockprovider"
)

// Release announcements travel on sharded pub/sub (SPUBLISH in the release
// script, SSUBSCRIBE here), on a channel named like the name's key, so the
// announcement stays on the shard that owns the name and Cluster does not
// broadcast it to every node.
//
// Subscriptions are shared: on a single server (*goredis.Client, including
// Sentinel failover clients) one connection carries every channel. Redis
// Cluster requires the channels of one SSUBSCRIBE to share a slot, and
// go-redis resubscribes all channels of a connection in one command, so a
// ClusterClient gets one connection per slot that has waiters; other clients
// (Ring) one per name. A connection lives while it has waiters.

// healthEvery is how long a silent subscription waits before it pings, so a
// dead connection is noticed and re-established.
const healthEvery = 30 * time.Second

type notifier struct {
	client Client
	log    *slog.Logger
	route  func(channel string) string
	hub    notify.Hub // keyed by channel

	// mu guards subs and the subscriptions' channels. The hub's hooks take
	// it under the hub's lock, so it is never held while calling the hub.
	mu   sync.Mutex
	subs map[string]*subscription // by route
}

// subscription is one pub/sub connection and its listener goroutine.
type subscription struct {
	route    string
	channels map[string]*channelWaiters // guarded by notifier.mu
	closed   bool                       // guarded by notifier.mu

	// io serialises the commands that change what ps is subscribed to, so
	// an unsubscribe cannot overtake a later subscribe of the same channel.
	// It is never held while notifier.mu is wanted by the listener.
	io      sync.Mutex
	ps      *goredis.PubSub // created at the first subscribe, under io
	closing chan struct{}   // closed before ps is closed
	done    chan struct{}   // closed when the listener returned

	// ctx is the listener's; cancelled on close so that a reconnect in
	// progress gives up.
	ctx    context.Context
	cancel context.CancelFunc
}

// channelWaiters is the state of a channel while it has registrations.
type channelWaiters struct {
	// ready is closed when the server confirmed the subscription
	// (confirmed) or it failed before that (err). Guarded by notifier.mu.
	ready     chan struct{}
	confirmed bool
	err       error
}

// settle closes ready once, recording the outcome; it reports whether this
// call closed it.
func (cw *channelWaiters) settle(err error) bool {
	if cw.confirmed || cw.err != nil {
		return false
	}
	if err == nil {
		cw.confirmed = true
	} else {
		cw.err = err
	}
	close(cw.ready)
	return true
}

func (n *notifier) init(c Client, log *slog.Logger) {
	n.client, n.log = c, log
	n.subs = make(map[string]*subscription)
	switch c.(type) {
	case *goredis.Client:
		n.route = func(string) string { return "" }
	case *goredis.ClusterClient:
		n.route = func(ch string) string { return strconv.Itoa(int(slot(ch))) }
	default:
		n.route = func(ch string) string { return ch }
	}
}

// NotifyRelease implements lockprovider.ReleaseNotifier. It returns once the
// server confirmed the subscription, so a release after it returns is
// announced. A release that leaves the lease in force until its AtLeastFor
// bound is not announced. After a lost connection is re-established, the
// waiters of each channel are signalled once, since a release may have gone
// unheard. Requires Redis 7.0 or newer (sharded pub/sub). It returns by
// ctx's deadline even against a server that accepts connections but does
// not answer: the subscription is opened, and closed by stop, on goroutines
// of the provider, never by the caller.
func (p *Provider) NotifyRelease(ctx context.Context, name string, ch chan<- struct{}) (stop func(), err error) {
	if stop, err := check.LiveWatch(ctx, batontype.ValidateName(name), lockprovider.ValidateWatch(ch)); err != nil {
		return stop, err
	}
	return p.notify.add(ctx, p.key(name), ch)
}

func (n *notifier) add(ctx context.Context, channel string, ch chan<- struct{}) (func(), error) {
	route := n.route(channel)
	var (
		s     *subscription
		cw    *channelWaiters
		fresh bool
	)
	reg := n.hub.Add(channel, ch, func(firstOfKey, _ bool) {
		n.mu.Lock()
		defer n.mu.Unlock()
		s = n.subs[route]
		if s == nil {
			ctx, cancel := context.WithCancel(context.Background())
			s = &subscription{
				ctx:      ctx,
				cancel:   cancel,
				route:    route,
				channels: make(map[string]*channelWaiters),
				closing:  make(chan struct{}),
				done:     make(chan struct{}),
			}
			n.subs[route] = s
		}
		if firstOfKey {
			s.channels[channel] = &channelWaiters{ready: make(chan struct{})}
		}
		cw, fresh = s.channels[channel], firstOfKey
	})
	stop := n.hub.Stopper(reg, func(lastOfKey, _ bool) func() { return n.removed(s, channel, lastOfKey) })
	if fresh {
		// On a goroutine: opening the connection and sending SSUBSCRIBE
		// wait on the network under s.io, and a connection that stopped
		// answering must cost each caller its own deadline at most, not
		// the sum of everyone's before it.
		go n.subscribe(ctx, s, channel, cw)
	}
	select {
	case <-cw.ready:
		n.mu.Lock()
		err := cw.err
		n.mu.Unlock()
		if err != nil {
			stop()
			return nil, err
		}
		return stop, nil
	case <-ctx.Done():
		stop()
		return nil, ctx.Err()
	}
}

// subscribe sends SSUBSCRIBE for channel, opening the connection and
// starting the listener on first use. Errors are not returned: go-redis
// records the channel anyway and the listener's next receive reconnects and
// resubscribes; the caller waits for the confirmation.
func (n *notifier) subscribe(ctx context.Context, s *subscription, channel string, cw *channelWaiters) {
	s.io.Lock()
	defer s.io.Unlock()
	n.mu.Lock()
	current := !s.closed && s.channels[channel] == cw
	n.mu.Unlock()
	if !current {
		return // already given up
	}
	if s.ps == nil {
		s.ps = n.client.SSubscribe(ctx, channel)
		go n.listen(s)
		return
	}
	if err := s.ps.SSubscribe(ctx, channel); err != nil {
		n.log.Debug("redis: subscribe release channel", "channel", channel, "err", err)
	}
}

// removed drops channel from s with its last registration, under the hub's
// lock; the function it returns starts the unsubscribe, or the close of
// the connection with its last channel.
func (n *notifier) removed(s *subscription, channel string, lastOfKey bool) func() {
	if !lastOfKey {
		return nil
	}
	n.mu.Lock()
	delete(s.channels, channel)
	last := len(s.channels) == 0
	if last {
		s.closed = true
		if n.subs[s.route] == s {
			delete(n.subs, s.route)
		}
	}
	n.mu.Unlock()
	return func() {
		if last {
			s.cancel() // a reconnect in progress gives up
		}
		// The commands wait on the network under s.io, possibly behind a
		// subscribe to a server that stopped answering: the caller does
		// not wait for them.
		go n.teardown(s, channel, last)
	}
}

// teardown unsubscribes channel, or closes the connection when it was the
// last, in order with the other commands of s.
func (n *notifier) teardown(s *subscription, channel string, last bool) {
	s.io.Lock()
	defer s.io.Unlock()
	if s.ps == nil {
		return
	}
	if last {
		close(s.closing)
		_ = s.ps.Close()
		<-s.done
		return
	}
	n.mu.Lock()
	again := s.channels[channel] != nil // re-added meanwhile: keep it
	n.mu.Unlock()
	if !again {
		if err := s.ps.SUnsubscribe(context.Background(), channel); err != nil {
			n.log.Debug("redis: unsubscribe release channel", "channel", channel, "err", err)
		}
	}
}

func (n *notifier) listen(s *subscription) {
	defer close(s.done)
	backoff := notify.Backoff{Min: 50 * time.Millisecond, Max: 2 * time.Second}
	for {
		msg, err := s.ps.ReceiveTimeout(s.ctx, healthEvery)
		if err != nil {
			select {
			case <-s.closing:
				return
			default:
			}
			if ne := net.Error(nil); errors.As(err, &ne) && ne.Timeout() {
				// Quiet; a ping shows whether the connection still works.
				_ = s.ps.Ping(s.ctx)
				continue
			}
			// Registrations still waiting for their confirmation fail
			// now rather than wait for a server that may not come back;
			// their callers fall back to polling. Confirmed ones stay and
			// are resubscribed when go-redis reconnects.
			n.fail(s, err)
			if rerr := goredis.Error(nil); errors.As(err, &rerr) {
				continue // the server refused, e.g. no SSUBSCRIBE before Redis 7
			}
			wait := backoff.Next()
			n.log.Warn("redis: release subscription lost; reconnecting", "err", err, "retry_in", wait)
			select {
			case <-s.closing:
				return
			case <-time.After(wait):
			}
			continue
		}
		backoff.Reset()
		switch m := msg.(type) {
		case *goredis.Message:
			n.signal(s, m.Channel, false)
		case *goredis.Subscription:
			switch m.Kind {
			case "ssubscribe":
				n.signal(s, m.Channel, true)
			case "sunsubscribe":
				// Either ours (the channel has no waiters left, so this
				// wakes nobody) or the server's, when a Cluster slot moved
				// away: wake the waiters so they poll instead of waiting
				// for an announcement that cannot come on this connection.
				n.signal(s, m.Channel, false)
			}
		}
	}
}

// signal wakes the waiters of channel. A subscription confirmation marks the
// channel ready the first time and, after a reconnect, wakes its waiters.
func (n *notifier) signal(s *subscription, channel string, confirmation bool) {
	n.mu.Lock()
	cw := s.channels[channel]
	// A first confirmation completes the registration.
	settled := cw != nil && confirmation && cw.settle(nil)
	n.mu.Unlock()
	if cw == nil || settled {
		return // not carried by s (any more), or the first confirmation
	}
	n.hub.Signal(channel)
}

func (n *notifier) fail(s *subscription, err error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	for _, cw := range s.channels {
		cw.settle(err)
	}
}

// slot is the Redis Cluster hash slot of key: CRC16 (XMODEM) of its hash
// tag, modulo 16384.
func slot(key string) uint16 {
	if i := strings.IndexByte(key, '{'); i >= 0 {
		if j := strings.IndexByte(key[i+1:], '}'); j > 0 {
			key = key[i+1 : i+1+j]
		}
	}
	var crc uint16
	for i := 0; i < len(key); i++ {
		crc ^= uint16(key[i]) << 8
		for range 8 {
			if crc&0x8000 != 0 {
				crc = crc<<1 ^ 0x1021
			} else {
				crc <<= 1
			}
		}
	}
	return crc % 16384
}
