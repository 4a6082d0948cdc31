package postgres

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/baton-go/baton/lockprovider"
)

// Timing of the waiter marks (rows of the waiters table): a mark lasts markFor and is
// renewed every markEvery while the name has local waiters, so marks of a
// crashed process lapse within markFor.
const (
	markFor   = 30 * time.Second
	markEvery = 10 * time.Second
	// listenLockTimeout bounds how long marking waits for a row lock held
	// by another session; the listening connection is ours, so the setting
	// cannot leak into anyone's transaction.
	listenLockTimeout = "1s"
)

// NotifyRelease implements lockprovider.ReleaseNotifier with LISTEN/NOTIFY.
//
// One listening connection per Provider serves every waiter: it is opened
// by the first registration and closed by the last stop, together with its
// goroutine. Notifications are fanned out in-process by lock name.
//
// NOTIFY makes committing transactions queue on a cluster-wide lock, so
// Release notifies only for names that have waiters: NotifyRelease records
// the name in the waiters table (Config.Table+"_waiters") before it
// returns, and the listener renews the record while waiters remain; it
// lapses markFor after the last renewal. Expiry is never announced, and a
// release that leaves the lease held until its AtLeastFor bound is not
// announced either: waiters must still poll as a fallback. If the listening
// connection breaks, the provider reconnects with backoff and wakes every
// waiter, since releases may have been missed meanwhile.
func (p *Provider) NotifyRelease(ctx context.Context, name string, ch chan<- struct{}) (stop func(), err error) {
	if err := lockprovider.ValidateName(name); err != nil {
		return nil, err
	}
	if ch == nil {
		return nil, &lockprovider.ValidationError{Field: "ch", Value: "nil", Reason: "must not be nil", Err: lockprovider.ErrInvalid}
	}
	return p.listen.add(ctx, name, ch)
}

type listener struct {
	table              string // quoted, qualified table name
	markSQL            string
	markFor, markEvery time.Duration                                // the constants above; tests shorten them
	open               func(ctx context.Context) (*pgx.Conn, error) // nil: no way to listen
	log                *slog.Logger

	mu   sync.Mutex
	subs map[string]map[*subscription]struct{} // by lock name
	n    int                                   // registrations
	run  *listenRun                            // nil while n == 0
}

type subscription struct{ ch chan<- struct{} }

// listenRun is one lifetime of the listening connection and its goroutine.
type listenRun struct {
	cancel context.CancelFunc
	done   chan struct{}

	// Guarded by listener.mu:
	interrupt context.CancelFunc // ends the loop's current wait
	pending   []markReq          // names for the loop to mark
}

type markReq struct {
	name string
	done chan error
}

func newListener(p *Provider, db DB, open func(ctx context.Context) (*pgx.Conn, error)) *listener {
	if open == nil {
		if pool, ok := db.(*pgxpool.Pool); ok {
			open = func(ctx context.Context) (*pgx.Conn, error) {
				c, err := pool.Acquire(ctx)
				if err != nil {
					return nil, err
				}
				// Hijack takes the connection out of the pool: the pool
				// may open another, and ours never returns to it with a
				// LISTEN still active.
				return c.Hijack(), nil
			}
		}
	}
	return &listener{
		table:     p.names.Locks,
		markSQL:   p.markSQL,
		markFor:   markFor,
		markEvery: markEvery,
		open:      open,
		log:       p.log,
		subs:      make(map[string]map[*subscription]struct{}),
	}
}

func (l *listener) add(ctx context.Context, name string, ch chan<- struct{}) (func(), error) {
	if l.open == nil {
		return nil, ErrNoListener
	}
	l.mu.Lock()
	if l.run == nil {
		// Connect while holding mu: concurrent first registrations share
		// the one connection.
		conn, err := l.connect(ctx)
		if err == nil {
			err = l.mark(ctx, conn, []string{name})
			if err != nil {
				closeConn(conn)
			}
		}
		if err != nil {
			l.mu.Unlock()
			return nil, err
		}
		runCtx, cancel := context.WithCancel(context.Background())
		r := &listenRun{cancel: cancel, done: make(chan struct{}), interrupt: func() {}}
		l.run = r
		s := l.subscribe(name, ch)
		go l.loop(runCtx, conn, r)
		l.mu.Unlock()
		return l.stopFunc(name, s), nil
	}
	var req *markReq
	if len(l.subs[name]) == 0 {
		// First local waiter of this name: the loop marks the row on the
		// listening connection.
		req = &markReq{name: name, done: make(chan error, 1)}
		l.run.pending = append(l.run.pending, *req)
		l.run.interrupt()
	}
	s := l.subscribe(name, ch)
	l.mu.Unlock()
	stop := l.stopFunc(name, s)
	if req != nil {
		select {
		case err := <-req.done:
			if err != nil {
				stop()
				return nil, err
			}
		case <-ctx.Done():
			stop()
			return nil, ctx.Err()
		}
	}
	return stop, nil
}

// subscribe registers ch; l.mu must be held.
func (l *listener) subscribe(name string, ch chan<- struct{}) *subscription {
	if l.subs[name] == nil {
		l.subs[name] = make(map[*subscription]struct{})
	}
	s := &subscription{ch: ch}
	l.subs[name][s] = struct{}{}
	l.n++
	return s
}

func (l *listener) stopFunc(name string, s *subscription) func() {
	var once sync.Once
	return func() { once.Do(func() { l.remove(name, s) }) }
}

func (l *listener) remove(name string, s *subscription) {
	l.mu.Lock()
	delete(l.subs[name], s)
	if len(l.subs[name]) == 0 {
		delete(l.subs, name)
	}
	l.n--
	var r *listenRun
	if l.n == 0 {
		r, l.run = l.run, nil
	}
	l.mu.Unlock()
	if r != nil {
		// Outside the mutex: the loop may be dispatching.
		r.cancel()
		<-r.done
	}
}

// connect opens the listening connection and subscribes it.
func (l *listener) connect(ctx context.Context) (*pgx.Conn, error) {
	conn, err := l.open(ctx)
	if err != nil {
		return nil, fmt.Errorf("postgres: open listener: %w", err)
	}
	// The channel names the table by oid, resolved on this connection
	// (so Config.Listen connections must see the same search_path).
	var channel string
	if err := conn.QueryRow(ctx, "SELECT 'baton_release:' || $1::regclass::oid::text", l.table).Scan(&channel); err != nil {
		closeConn(conn)
		return nil, fmt.Errorf("postgres: listen: resolve table %s: %w", l.table, err)
	}
	sql := "SET lock_timeout = '" + listenLockTimeout + "'; LISTEN " + pgx.Identifier{channel}.Sanitize()
	if _, err := conn.Exec(ctx, sql); err != nil {
		closeConn(conn)
		return nil, fmt.Errorf("postgres: listen: %w", err)
	}
	return conn, nil
}

func (l *listener) mark(ctx context.Context, conn *pgx.Conn, names []string) error {
	if len(names) == 0 {
		return nil
	}
	if _, err := conn.Exec(ctx, l.markSQL, names, l.markFor); err != nil {
		return fmt.Errorf("postgres: register waiters: %w", err)
	}
	return nil
}

// loop receives notifications and serves mark requests until ctx ends.
func (l *listener) loop(ctx context.Context, conn *pgx.Conn, r *listenRun) {
	defer close(r.done)
	defer func() {
		if conn != nil {
			closeConn(conn)
		}
	}()
	nextRefresh := time.Now().Add(l.markEvery)
	for {
		// Renew here rather than on a wait timeout only, so a steady stream
		// of notifications cannot starve the renewal.
		if !time.Now().Before(nextRefresh) {
			nextRefresh = time.Now().Add(l.markEvery)
			if err := l.mark(ctx, conn, l.names()); err != nil && !conn.IsClosed() {
				l.log.Warn("baton postgres: renewing waiter marks failed", "err", err)
			}
		}
		waitCtx, cancel := context.WithDeadline(ctx, nextRefresh)
		l.mu.Lock()
		r.interrupt = cancel
		reqs := r.pending
		r.pending = nil
		l.mu.Unlock()
		if len(reqs) > 0 {
			cancel()
			names := make([]string, len(reqs))
			for i, q := range reqs {
				names[i] = q.name
			}
			err := l.mark(ctx, conn, names)
			for _, q := range reqs {
				q.done <- err
			}
			if err == nil || !conn.IsClosed() {
				continue
			}
		} else {
			n, err := conn.WaitForNotification(waitCtx)
			cancel()
			switch {
			case err == nil:
				l.dispatch(n.Payload)
				continue
			case ctx.Err() != nil:
				return
			case waitCtx.Err() != nil && !conn.IsClosed():
				continue // interrupted for a mark request, or time to renew
			default:
				l.log.Warn("baton postgres: release listener lost its connection; reconnecting", "err", err)
			}
		}
		if ctx.Err() != nil {
			return
		}
		closeConn(conn)
		conn = l.reconnect(ctx)
		if conn == nil {
			return
		}
		nextRefresh = time.Now().Add(l.markEvery)
		l.wakeAll() // releases may have gone unheard while disconnected
	}
}

// reconnect opens a new listening connection with backoff and re-marks
// every name with waiters. It returns nil when ctx ends first.
func (l *listener) reconnect(ctx context.Context) *pgx.Conn {
	backoff := 50 * time.Millisecond
	for {
		t := time.NewTimer(backoff)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil
		case <-t.C:
		}
		backoff = min(2*backoff, 5*time.Second)
		conn, err := l.connect(ctx)
		if err == nil {
			if err = l.mark(ctx, conn, l.names()); err == nil {
				return conn
			}
			closeConn(conn)
		}
		if ctx.Err() != nil {
			return nil
		}
		l.log.Warn("baton postgres: release listener reconnect failed", "err", err)
	}
}

func (l *listener) names() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	names := make([]string, 0, len(l.subs))
	for name := range l.subs {
		names = append(names, name)
	}
	return names
}

func (l *listener) dispatch(name string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for s := range l.subs[name] {
		select {
		case s.ch <- struct{}{}:
		default:
		}
	}
}

func (l *listener) wakeAll() {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, subs := range l.subs {
		for s := range subs {
			select {
			case s.ch <- struct{}{}:
			default:
			}
		}
	}
}

// closeConn closes conn and waits until pgconn's cleanup is over, so no
// goroutine of the connection survives.
func closeConn(conn *pgx.Conn) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = conn.Close(ctx)
	<-conn.PgConn().CleanupDone()
}
