package postgres

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/baton-go/baton/batontype"
	"github.com/baton-go/baton/internal/check"
	"github.com/baton-go/baton/internal/clock"
	"github.com/baton-go/baton/internal/notify"
	"github.com/baton-go/baton/lockprovider"
)

const (
	// listenLockTimeout bounds how long marking waits for a row lock held
	// by another session; the listening connection is ours, so the setting
	// cannot leak into anyone's transaction.
	listenLockTimeout = "1s"
	// closeWait bounds the clean close (a Terminate message) of a
	// listening connection.
	closeWait = 250 * time.Millisecond
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
	if stop, err := check.Watch(ctx, batontype.ValidateName(name), lockprovider.ValidateWatch(ch)); err != nil {
		return stop, err
	}
	return p.listen.add(ctx, name, ch)
}

type listener struct {
	table              string // quoted, qualified table name
	markSQL            string
	markFor, markEvery time.Duration                                // notify.MarkFor and MarkEvery; tests shorten them
	open               func(ctx context.Context) (*pgx.Conn, error) // nil: no way to listen
	log                *slog.Logger

	hub notify.Hub // keyed by lock name (or controlPayload)

	// mu guards run and its fields below. The hub's hooks take it under
	// the hub's lock, so the loop never calls the hub while holding it.
	mu  sync.Mutex
	run *listenRun // nil while the hub has no registration
}

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
		markFor:   notify.MarkFor,
		markEvery: notify.MarkEvery,
		open:      open,
		log:       p.log,
	}
}

func (l *listener) add(ctx context.Context, name string, ch chan<- struct{}) (func(), error) {
	if l.open == nil {
		return nil, ErrNoListener
	}
	// No I/O under mu: the loop goroutine connects and marks, and each
	// caller waits for its own mark with its own ctx, so a connection that
	// stopped answering delays nobody past their deadline.
	var req *markReq
	sub := l.hub.Add(name, ch, func(firstOfKey, first bool) {
		l.mu.Lock()
		defer l.mu.Unlock()
		if first {
			runCtx, cancel := context.WithCancel(context.Background())
			l.run = &listenRun{cancel: cancel, done: make(chan struct{}), interrupt: func() {}}
			go l.loop(runCtx, l.run)
		}
		if firstOfKey {
			// First local waiter of this name: the loop marks the row on
			// the listening connection. The name is registered already, so
			// a reconnect's l.hub.Keys() includes it too.
			req = &markReq{name: name, done: make(chan error, 1)}
			l.run.pending = append(l.run.pending, *req)
			l.run.interrupt()
		}
	})
	stop := l.hub.Stopper(sub, l.removed)
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

// removed ends the listening connection and its goroutine with the last
// registration, waiting for the goroutine once the hub's lock is released
// (it may be dispatching).
func (l *listener) removed(_, last bool) func() {
	if !last {
		return nil
	}
	l.mu.Lock()
	r := l.run
	l.run = nil
	l.mu.Unlock()
	return func() {
		r.cancel()
		<-r.done
	}
}

// connect opens the listening connection and subscribes it, within
// notify.IOTimeout.
func (l *listener) connect(ctx context.Context) (*pgx.Conn, error) {
	ctx, cancel := context.WithTimeout(ctx, notify.IOTimeout)
	defer cancel()
	conn, err := l.open(ctx)
	if err != nil {
		return nil, opError("open listener", "", err)
	}
	// The channel names the table by oid, resolved on this connection
	// (so Config.Listen connections must see the same search_path).
	var channel string
	if err := conn.QueryRow(ctx, "SELECT 'baton_release:' || $1::regclass::oid::text", l.table).Scan(&channel); err != nil {
		closeConn(conn)
		return nil, opError("listen: resolve table "+l.table, "", err)
	}
	sql := "SET lock_timeout = '" + listenLockTimeout + "'; LISTEN " + pgx.Identifier{channel}.Sanitize()
	if _, err := conn.Exec(ctx, sql); err != nil {
		closeConn(conn)
		return nil, opError("listen", "", err)
	}
	return conn, nil
}

func (l *listener) mark(ctx context.Context, conn *pgx.Conn, names []string) error {
	if len(names) == 0 {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, notify.IOTimeout)
	defer cancel()
	if _, err := conn.Exec(ctx, l.markSQL, names, l.markFor); err != nil {
		return opError("register waiters", "", err)
	}
	return nil
}

// loop connects, then receives notifications and serves mark requests
// until ctx ends, reconnecting with backoff when the connection breaks.
func (l *listener) loop(ctx context.Context, r *listenRun) {
	defer close(r.done)
	var conn *pgx.Conn
	defer func() {
		if conn != nil {
			closeConn(conn)
		}
	}()
	var (
		backoff     = notify.Backoff{Min: 50 * time.Millisecond, Max: 5 * time.Second}
		wait        time.Duration // before the next connection attempt
		connected   bool          // a connection was up before: wake waiters on reconnect
		nextRefresh time.Time
	)
	for {
		if conn == nil {
			if !clock.Sleep(ctx, wait) {
				return
			}
			var err error
			conn, err = l.connectAndMark(ctx, r)
			if ctx.Err() != nil {
				return
			}
			if err != nil {
				wait = backoff.Next()
				l.log.Warn("baton postgres: release listener cannot connect; retrying", "err", err, "retry_in", wait)
				continue
			}
			wait = 0
			backoff.Reset()
			nextRefresh = time.Now().Add(l.markEvery)
			if connected {
				l.hub.SignalAll() // releases may have gone unheard while disconnected
			}
			connected = true
		}
		// Renew here rather than on a wait timeout only, so a steady stream
		// of notifications cannot starve the renewal.
		if !time.Now().Before(nextRefresh) {
			nextRefresh = time.Now().Add(l.markEvery)
			if err := l.mark(ctx, conn, l.hub.Keys()); err != nil && !conn.IsClosed() {
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
				l.hub.Signal(n.Payload)
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
		conn = nil
	}
}

// connectAndMark opens a listening connection and marks every name with
// waiters, answering the pending mark requests either way.
func (l *listener) connectAndMark(ctx context.Context, r *listenRun) (*pgx.Conn, error) {
	conn, err := l.connect(ctx)
	l.mu.Lock()
	reqs := r.pending
	r.pending = nil
	l.mu.Unlock()
	if err == nil {
		// l.hub.Keys() includes the pending names: add registers before it
		// queues the request.
		if err = l.mark(ctx, conn, l.hub.Keys()); err != nil {
			closeConn(conn)
			conn = nil
		}
	}
	for _, q := range reqs {
		q.done <- err
	}
	return conn, err
}

// closeConn closes conn within closeWait. A connection whose statement was
// cancelled is already being closed by pgx in the background, with a
// cancel request sent to the server that can take 15 s on a dead path;
// nobody waits for that, or every waiter on the provider would wait too.
func closeConn(conn *pgx.Conn) {
	if conn.IsClosed() {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), closeWait)
	defer cancel()
	_ = conn.Close(ctx) // returns once the socket is closed
}
