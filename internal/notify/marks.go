package notify

import "time"

// Timing of waiter marks, the rows by which a database provider without
// per-name subscriptions learns which names have waiters: a mark lasts
// MarkFor and is renewed every MarkEvery while the name has local
// waiters, so the marks of a crashed process lapse within MarkFor.
const (
	MarkFor   = 30 * time.Second
	MarkEvery = 10 * time.Second
)
