package lockprovidertest

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/baton-go/baton/batontype"

	"github.com/baton-go/baton/lockprovider"
)

func validationCases() []testCase {
	return []testCase{
		{"Acquire", testValidateAcquire},
		{"Extend", testValidateExtend},
		{"Release", testValidateRelease},
		{"Capabilities", testValidateCapabilities},
		{"ValidEdges", testValidEdges},
	}
}

type badName struct {
	what, name string
}

func badNames() []badName {
	return []badName{
		{"empty name", ""},
		{"over-long name", strings.Repeat("n", batontype.MaxNameLen+1)},
		{"name with newline", "job\nname"},
		{"name with NUL", "job\x00name"},
		{"name with DEL", "job\x7fname"},
		{"name with C1 control", "job\u0085name"},
		{"name with invalid UTF-8", "job\xffname"},
	}
}

type badOwner struct {
	what, owner string
}

func badOwners() []badOwner {
	return []badOwner{
		{"empty owner", ""},
		{"over-long owner", strings.Repeat("o", batontype.MaxOwnerLen+1)},
		{"owner with control character", "own\ter"},
		{"owner with invalid UTF-8", "own\xfeer"},
	}
}

type badDurations struct {
	what            string
	atMost, atLeast time.Duration
	field           string
}

func badDurationCases() []badDurations {
	return []badDurations{
		{"zero AtMostFor", 0, 0, "AtMostFor"},
		{"negative AtMostFor", -time.Second, 0, "AtMostFor"},
		{"AtMostFor below the minimum", batontype.MinDuration - 1, 0, "AtMostFor"},
		{"AtMostFor above the maximum", batontype.MaxDuration + time.Second, 0, "AtMostFor"},
		{"negative AtLeastFor", time.Second, -time.Millisecond, "AtLeastFor"},
		{"AtLeastFor above AtMostFor", time.Second, time.Second + time.Millisecond, "AtLeastFor"},
	}
}

// wantInvalid checks that err is a *batontype.ValidationError for field
// that matches sentinel and ErrInvalid.
func (e *env) wantInvalid(err, sentinel error, field, what string) {
	e.t.Helper()
	if err == nil {
		e.t.Errorf("%s: no error, want %v", what, sentinel)
		return
	}
	if !errors.Is(err, sentinel) || !errors.Is(err, batontype.ErrInvalid) {
		e.t.Errorf("%s: error %v does not match %v and ErrInvalid", what, err, sentinel)
	}
	var ve *batontype.ValidationError
	if !errors.As(err, &ve) {
		e.t.Errorf("%s: error %v (%T) is not a *batontype.ValidationError", what, err, err)
	} else if ve.Field != field {
		e.t.Errorf("%s: ValidationError.Field = %q, want %q", what, ve.Field, field)
	}
	for _, definite := range []error{batontype.ErrNotAcquired, batontype.ErrNotHeld, batontype.ErrStaleTick} {
		if errors.Is(err, definite) {
			e.t.Errorf("%s: error %v also matches %v", what, err, definite)
		}
	}
}

// Every invalid input to Acquire is refused with a typed error and grants
// nothing.
func testValidateAcquire(e *env) {
	valid := func() lockprovider.AcquireParams {
		return lockprovider.AcquireParams{
			Name: e.name(), Owner: lockprovider.NewOwner(), LockedBy: "host-1",
			AtMostFor: time.Second,
		}
	}
	check := func(p lockprovider.AcquireParams, sentinel error, field, what string) {
		e.t.Helper()
		_, err := e.p.Acquire(e.ctx, p)
		e.wantInvalid(err, sentinel, field, "Acquire with "+what)
		if batontype.ValidateName(p.Name) == nil {
			e.wantFree(p.Name, "after Acquire with "+what)
		}
	}
	for _, c := range badNames() {
		p := valid()
		p.Name = c.name
		check(p, batontype.ErrInvalidName, "Name", c.what)
	}
	for _, c := range badOwners() {
		p := valid()
		p.Owner = c.owner
		check(p, batontype.ErrInvalidOwner, "Owner", c.what)
	}
	for _, c := range badDurationCases() {
		p := valid()
		p.AtMostFor, p.AtLeastFor = c.atMost, c.atLeast
		check(p, batontype.ErrInvalidDuration, c.field, c.what)
	}
	p := valid()
	p.LockedBy = strings.Repeat("h", batontype.MaxLockedByLen+1)
	check(p, batontype.ErrInvalid, "LockedBy", "over-long LockedBy")
	p = valid()
	p.LockedBy = "host\n1"
	check(p, batontype.ErrInvalid, "LockedBy", "LockedBy with a control character")
	p = valid()
	p.Tick = time.Unix(-60, 0)
	check(p, batontype.ErrInvalid, "Tick", "a tick before 1970")
}

// Every invalid input to Extend is refused with a typed error and changes
// nothing.
func testValidateExtend(e *env) {
	name, owner := e.name(), lockprovider.NewOwner()
	l := e.mustAcquire(name, owner, long, 0)
	check := func(p lockprovider.ExtendParams, sentinel error, field, what string) {
		e.t.Helper()
		_, err := e.p.Extend(e.ctx, p)
		e.wantInvalid(err, sentinel, field, "Extend with "+what)
	}
	valid := lockprovider.ExtendParams{Name: name, Owner: owner, AtMostFor: time.Second}
	for _, c := range badNames() {
		p := valid
		p.Name = c.name
		check(p, batontype.ErrInvalidName, "Name", c.what)
	}
	for _, c := range badOwners() {
		p := valid
		p.Owner = c.owner
		check(p, batontype.ErrInvalidOwner, "Owner", c.what)
	}
	for _, c := range badDurationCases() {
		p := valid
		p.AtMostFor, p.AtLeastFor = c.atMost, c.atLeast
		check(p, batontype.ErrInvalidDuration, c.field, c.what)
	}
	again, err := e.acquire(name, owner, long, 0)
	if err != nil || !sameLease(again, l) {
		e.t.Errorf("lease after invalid Extends: %+v, %v; want unchanged %+v", again, err, l)
	}
	e.mustRelease(name, owner)
}

// Every invalid input to Release is refused with a typed error and releases
// nothing.
func testValidateRelease(e *env) {
	name, owner := e.name(), lockprovider.NewOwner()
	e.mustAcquire(name, owner, long, 0)
	valid := lockprovider.ReleaseParams{Name: name, Owner: owner}
	for _, c := range badNames() {
		p := valid
		p.Name = c.name
		e.wantInvalid(e.p.Release(e.ctx, p), batontype.ErrInvalidName, "Name", "Release with "+c.what)
	}
	for _, c := range badOwners() {
		p := valid
		p.Owner = c.owner
		e.wantInvalid(e.p.Release(e.ctx, p), batontype.ErrInvalidOwner, "Owner", "Release with "+c.what)
	}
	e.wantHeld(name, "after invalid Releases")
	e.mustRelease(name, owner)
}

// The optional capabilities validate names too.
func testValidateCapabilities(e *env) {
	in, isInspector := e.p.(lockprovider.Inspector)
	rn, isNotifier := e.p.(lockprovider.ReleaseNotifier)
	if !isInspector && !isNotifier {
		e.t.Skip("provider implements neither lockprovider.Inspector nor lockprovider.ReleaseNotifier")
	}
	for _, c := range badNames() {
		if isInspector {
			_, err := in.Inspect(e.ctx, c.name)
			e.wantInvalid(err, batontype.ErrInvalidName, "Name", "Inspect with "+c.what)
		}
		if isNotifier {
			stop, err := rn.NotifyRelease(e.ctx, c.name, make(chan struct{}, 1))
			e.wantInvalid(err, batontype.ErrInvalidName, "Name", "NotifyRelease with "+c.what)
			if stop != nil {
				stop()
			}
		}
	}
}

// Inputs at the limits, and names with characters that are special to
// Redis keys, SQL or shells, are accepted and work.
func testValidEdges(e *env) {
	base := e.name()
	names := []string{
		base + strings.Repeat("x", batontype.MaxNameLen-len(base)),
		base + " with spaces",
		base + "{braces}:colons",
		base + "}{",
		base + "'quote\"; drop table x; --",
		base + "%_*?[]\\",
		base + "/ジョブ/ü",
	}
	for _, name := range names {
		owner := strings.Repeat("a", batontype.MaxOwnerLen-32) + lockprovider.NewOwner()
		l, err := e.p.Acquire(e.ctx, lockprovider.AcquireParams{
			Name: name, Owner: owner,
			LockedBy:  strings.Repeat("h", batontype.MaxLockedByLen),
			AtMostFor: batontype.MinDuration, AtLeastFor: batontype.MinDuration,
		})
		if err != nil {
			e.t.Errorf("Acquire(%q) with limit values: %v", name, err)
			continue
		}
		e.checkLease(l, name, owner)
		// The 1ms lease lapses (AtLeastFor equals AtMostFor), so a long
		// lease by another owner exercises the name again.
		e.waitFree(name, "after a 1ms lease")
		other := lockprovider.NewOwner()
		e.mustAcquire(name, other, long, long)
		e.wantHeld(name, "name with special characters")
		if err := e.p.Release(context.WithoutCancel(e.ctx), lockprovider.ReleaseParams{Name: name, Owner: other}); err != nil {
			e.t.Errorf("Release(%q): %v", name, err)
		}
		e.wantHeld(name, "released inside AtLeastFor = AtMostFor")
	}
}
