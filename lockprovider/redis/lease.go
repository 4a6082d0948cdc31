package redis

import (
	"strconv"
	"strings"
	"time"
)

// The lease key holds one string:
//
//	<owner>\n<atLeast> <grant> <tick>\n<lockedBy>
//
// grant is "+<atMostFor ms>" right after a grant: the grant time is then the
// key's expiry minus that, which spares the acquire script a TIME call.
// Once the expiry moves (Extend, or a Release that keeps the lease until its
// at-least bound) the scripts rewrite grant as absolute Unix ms. atLeast is
// "0" (no bound), "+<ms>" after the grant, or absolute Unix ms. tick is the
// lease's tick in Unix ms, 0 for none. Owner and lockedBy contain no
// control characters (validated), so the newlines are unambiguous.

// leaseValue builds the value of a new grant, in one allocation.
func leaseValue(owner, lockedBy string, atMost, atLeast, tick int64) string {
	var buf [160]byte
	b := append(buf[:0], owner...)
	b = append(b, '\n')
	if atLeast == 0 {
		b = append(b, '0')
	} else {
		b = strconv.AppendInt(append(b, '+'), atLeast, 10)
	}
	b = strconv.AppendInt(append(b, " +"...), atMost, 10)
	b = strconv.AppendInt(append(b, ' '), tick, 10)
	b = append(append(b, '\n'), lockedBy...)
	return string(b)
}

// parsedLease is a decoded lease value.
type parsedLease struct {
	owner, lockedBy string
	granted         time.Time
	atLeastUntil    time.Time
	tick            time.Time // zero: none
}

// parseLease decodes v given the key's expiry in Unix ms.
func parseLease(v string, expiry int64) (parsedLease, bool) {
	owner, rest, ok1 := strings.Cut(v, "\n")
	line, lockedBy, ok2 := strings.Cut(rest, "\n")
	a, rest, ok3 := strings.Cut(line, " ")
	g, t, ok4 := strings.Cut(rest, " ")
	if !ok1 || !ok2 || !ok3 || !ok4 {
		return parsedLease{}, false
	}
	granted, ok := timeSpec(g, expiry, true)
	if !ok {
		return parsedLease{}, false
	}
	atLeast := granted
	if a != "0" {
		if atLeast, ok = timeSpec(a, granted, false); !ok {
			return parsedLease{}, false
		}
	}
	tick, err := strconv.ParseInt(t, 10, 64)
	if err != nil {
		return parsedLease{}, false
	}
	pl := parsedLease{owner: owner, lockedBy: lockedBy, granted: time.UnixMilli(granted), atLeastUntil: time.UnixMilli(atLeast)}
	if tick != 0 {
		pl.tick = time.UnixMilli(tick)
	}
	return pl, true
}

// timeSpec decodes "+<ms>" relative to base (subtracted when back is true)
// or absolute "<ms>".
func timeSpec(s string, base int64, back bool) (int64, bool) {
	rel := strings.HasPrefix(s, "+")
	n, err := strconv.ParseInt(strings.TrimPrefix(s, "+"), 10, 64)
	switch {
	case err != nil:
		return 0, false
	case !rel:
		return n, true
	case back:
		return base - n, true
	default:
		return base + n, true
	}
}
