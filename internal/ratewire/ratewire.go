// Package ratewire holds what the in-tree rate-limit providers share on the
// wire: the name of a limit's state within a key, the integers each limit
// is computed with, and the flat integer reply of the scripted decisions.
// None of it is part of the provider contract: a third-party provider may
// store and encode its state however it likes, as long as it passes
// lockprovidertest.Run (its Rate group).
package ratewire

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/baton-go/baton/batontype"
	"github.com/baton-go/baton/internal/ratemath"
	"github.com/baton-go/baton/lockprovider"
)

// algCodes are the one-letter algorithm codes of state IDs, indexed by
// batontype.Algorithm.
var algCodes = [...]byte{'?', 'f', 'l', 's', 't', 'g'}

// AppendID appends the ID of l's state within a key to b: the algorithm's
// code and the period in microseconds (e.g. "g1000000"). Changing a
// limit's Rate or Burst therefore keeps its state. Two limits of one valid
// request never share an ID (lockprovider.RateRequest.Validate refuses
// two limits with the same algorithm and period).
func AppendID(b []byte, l batontype.RateLimit) []byte {
	if int(l.Algorithm) < len(algCodes) {
		b = append(b, algCodes[l.Algorithm])
	}
	return strconv.AppendInt(b, l.Period.Microseconds(), 10)
}

// ID is AppendID as a string.
func ID(l batontype.RateLimit) string { return string(AppendID(nil, l)) }

// ParseID inverts ID: the algorithm and period a state ID names, for
// listings of stored state.
func ParseID(id string) (batontype.Algorithm, time.Duration, bool) {
	if id == "" {
		return 0, 0, false
	}
	var a batontype.Algorithm
	for i, c := range algCodes {
		if i > 0 && c == id[0] {
			a = batontype.Algorithm(i)
		}
	}
	us, err := strconv.ParseInt(id[1:], 10, 64)
	if a == 0 || err != nil || us <= 0 {
		return 0, 0, false
	}
	return a, time.Duration(us) * time.Microsecond, true
}

// Reduced returns l's period in microseconds and its rate, both divided by
// their greatest common divisor (see ratemath.Reduced).
func Reduced(l batontype.RateLimit) (p, q int64) {
	return ratemath.Reduced(l.Period.Microseconds(), l.Rate)
}

// PerArg is the number of integers Args gives each limit.
const PerArg = 6

// Args encodes limits for the SQL decision functions: each limit's ID,
// and per limit its algorithm, rate, period (µs), capacity and reduced
// period and rate (see Reduced), PerArg integers in that order.
func Args(limits []batontype.RateLimit) (ids []string, args []int64) {
	ids = make([]string, len(limits))
	args = make([]int64, 0, PerArg*len(limits))
	for i, l := range limits {
		ids[i] = ID(l)
		p, q := Reduced(l)
		args = append(args, int64(l.Algorithm), l.Rate, l.Period.Microseconds(), l.Capacity(), p, q)
	}
	return ids, args
}

// Reply layout: a header of ReplyHeader integers (allowed, server time,
// delay-or-retry), then PerLimit integers per limit (remaining, retry,
// reset).
const (
	ReplyHeader = 3
	PerLimit    = 3
)

// errReply is returned by Decode for a malformed reply.
var errReply = errors.New("ratewire: malformed rate-limit reply")

// ParseReply reads the flat integer reply in its text form, the integers
// in decimal separated by spaces: the form of a server without arrays
// (MySQL). A malformed integer is strconv's error.
func ParseReply(reply string) ([]int64, error) {
	f := strings.Fields(reply)
	v := make([]int64, len(f))
	for i, s := range f {
		var err error
		if v[i], err = strconv.ParseInt(s, 10, 64); err != nil {
			return nil, err
		}
	}
	return v, nil
}

// Decode turns the flat integer reply shared by the providers' decision
// code into a lockprovider.RateResult: allowed (0/1), server time (µs
// since the Unix epoch), delay-or-retry (µs), then per limit remaining,
// retry (µs) and reset (µs).
func Decode(v []int64, limits int) (lockprovider.RateResult, error) {
	if len(v) != ReplyHeader+PerLimit*limits {
		return lockprovider.RateResult{}, fmt.Errorf("%w: %d values for %d limits", errReply, len(v), limits)
	}
	res := lockprovider.RateResult{
		Allowed: v[0] == 1,
		Now:     time.UnixMicro(v[1]),
		Limits:  make([]lockprovider.RateState, limits),
	}
	if res.Allowed {
		res.Delay = time.Duration(v[2]) * time.Microsecond
	} else {
		res.RetryAfter = time.Duration(v[2]) * time.Microsecond
	}
	for i := range res.Limits {
		w := v[ReplyHeader+PerLimit*i:]
		res.Limits[i] = lockprovider.RateState{
			Remaining:  w[0],
			RetryAfter: time.Duration(w[1]) * time.Microsecond,
			ResetAfter: time.Duration(w[2]) * time.Microsecond,
		}
	}
	return res, nil
}
