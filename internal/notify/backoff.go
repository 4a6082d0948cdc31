package notify

import "time"

// IOTimeout bounds each statement, and each connection attempt, of a SQL
// transport (PostgreSQL's listener, MySQL's poller), so that a connection
// that stopped answering is replaced instead of holding the transport
// forever.
const IOTimeout = 5 * time.Second

// Backoff spaces a transport's reconnection attempts: Min after a success
// (or at first), twice the previous delay after each failure, up to Max.
// The zero Backoff is not useful; set Min and Max.
type Backoff struct {
	Min, Max time.Duration
	d        time.Duration
}

// Next returns the delay to wait before the next attempt.
func (b *Backoff) Next() time.Duration {
	if b.d == 0 {
		b.d = b.Min
	} else {
		b.d = min(2*b.d, b.Max)
	}
	return b.d
}

// Reset starts the sequence again at Min, after a success.
func (b *Backoff) Reset() { b.d = 0 }
