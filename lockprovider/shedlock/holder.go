package shedlock

import (
	"os"
	"time"
	"unicode/utf8"

	"github.com/baton-go/baton/batontype"
	"github.com/baton-go/baton/lockprovider"
)

// lockedByOf is the informational part of locked_by that a mode writes
// when the caller names none: configured, or the host name.
func lockedByOf(configured string) (string, error) {
	if configured == "" {
		h, _ := os.Hostname()
		configured = batontype.Shorten(h, batontype.MaxLockedByLen-len("…"))
	}
	// The shared validation of LockedBy (length, UTF-8, no control
	// characters), through the parameters it normally checks.
	if err := (lockprovider.AcquireParams{Name: "x", Owner: "x", LockedBy: configured, AtMostFor: time.Second}).Validate(); err != nil {
		return "", err
	}
	return configured, nil
}

// infoOf is the informational part of a grant's locked_by: the caller's,
// or the mode's default.
func infoOf(a lockprovider.AcquireParams, dflt string) string {
	if a.LockedBy != "" {
		return a.LockedBy
	}
	return dflt
}

// holderText is the locked_by value of a Go grant: the informational part,
// shortened to fit ShedLock's VARCHAR(255), then '#' and the owner token.
func holderText(info, owner string) string {
	max := batontype.MaxLockedByLen - 1 - utf8.RuneCountInString(owner)
	if utf8.RuneCountInString(info) > max {
		r := []rune(info)
		info = string(r[:max])
	}
	return info + "#" + owner
}

// acquired is what an SQL mode's acquire saw of the row.
type acquired struct {
	granted bool // the caller holds the name now
	existed bool // the row was there
	held    bool // someone holds a live lease on it
	raced   bool // free when the statement began, yet another session took it first
	ticked  bool // the call carried a tick
}

// refusal is the answer of an acquire that saw s: nil when it granted,
// else why not. A free row that was not granted is refused only by the
// tick condition.
func (s acquired) refusal() error {
	switch {
	case s.granted:
		return nil
	case !s.existed, s.held, s.raced:
		return batontype.ErrNotAcquired
	case s.ticked:
		return batontype.ErrStaleTick
	}
	return batontype.ErrNotAcquired
}
