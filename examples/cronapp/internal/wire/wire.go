// Package wire is the format of the records cronapp writes for the demo
// runner: JSON lines (log/slog's JSON handler) on the app's stdout. The app
// writes them and the runner reads them, so both sides share these names.
package wire

import (
	"encoding/json"
	"time"
)

// Messages the runner acts on. Other log records pass through as they are.
const (
	MsgReady   = "ready"     // the scheduler started; carries Jobs
	MsgEvent   = "job event" // one outcome of one job on one tick
	MsgStopped = "stopped"   // the app shut down cleanly
)

// Outcomes of a job event.
const (
	Started     = "started"      // the scheduler calls the job function (this replica won the tick)
	Ran         = "ran"          // the job did its work for the tick
	Skipped     = "skipped"      // another replica holds the lock, or the tick already ran
	Missed      = "missed"       // ticks Tick to Last passed while this replica stood still (paused, clock stepped)
	Rejected    = "rejected"     // a fenced write was refused (fence.ErrStaleToken)
	Batch       = "synced"       // customer-sync: one replica's pass over the customers in one tick
	Paused      = "paused"       // the replica is about to freeze while holding a lock (demo)
	Resumed     = "resumed"      // the replica runs again after the pause
	LockLost    = "lock-lost"    // the job's lease ended while it ran
	Failed      = "failed"       // the job returned an error, or an acquire had an unknown outcome
	Duplicate   = "duplicate"    // the witness table already had this tick: exactly-once broken
	RateLimited = "rate-limited" // used in summaries; events carry counts in Batch
)

// Job describes one registered job, as announced in the ready record.
type Job struct {
	Name     string        `json:"name"`
	Every    time.Duration `json:"every"`  // nanoseconds
	Offset   time.Duration `json:"offset"` // nanoseconds
	Locked   bool          `json:"locked"` // one replica per tick (scheduler lock)
	Describe string        `json:"describe"`
}

// Record is one JSON line of the app's output. Fields a record does not
// carry are zero.
type Record struct {
	Time    time.Time `json:"time"`
	Level   string    `json:"level"`
	Msg     string    `json:"msg"`
	Replica string    `json:"replica"`
	PID     int       `json:"pid"`

	// MsgReady.
	Jobs   []Job  `json:"jobs"`
	Schema string `json:"schema"`
	Prefix string `json:"prefix"`

	// MsgEvent.
	Job     string    `json:"job"`
	Tick    time.Time `json:"tick"`
	Outcome string    `json:"outcome"`
	Token   int64     `json:"token"`
	Detail  string    `json:"detail"`
	// Missed: the last tick of the range that starts at Tick.
	Last time.Time `json:"last"`
	// Paused: how long the replica stays frozen; the runner resumes it.
	PauseFor time.Duration `json:"pause_for"`
	// Batch (customer-sync) counts.
	Synced  int `json:"synced"`
	Held    int `json:"held"`
	Limited int `json:"limited"`
	Deduped int `json:"deduped"`

	Err string `json:"err"`
}

// Parse decodes one line. ok is false for lines that are not JSON records.
func Parse(line []byte) (r Record, ok bool) {
	if len(line) == 0 || line[0] != '{' {
		return Record{}, false
	}
	if err := json.Unmarshal(line, &r); err != nil || r.Msg == "" {
		return Record{}, false
	}
	return r, true
}
