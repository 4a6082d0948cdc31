package redis

import (
	"context"
	_ "embed"
	"slices"
	"strconv"
	"strings"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/baton-go/baton/batontype"
	"github.com/baton-go/baton/internal/check"
	"github.com/baton-go/baton/internal/keyspace"
	"github.com/baton-go/baton/lockprovider"
)

//go:embed control.lua
var controlSrc string

var controlScript = goredis.NewScript(controlSrc)

// controlKeys are the keys of the paused flags, the run requests and the
// pause spans, in one slot of their own, and the channel that announces
// changes to them.
func (p *Provider) controlKeys() (keys []string, channel string) {
	base := p.prefix + "control:{baton}"
	return []string{base + ":p", base + ":q", base + ":e", base + ":ps", base + ":pe"}, base
}

// SetPaused implements lockprovider.Control in one script call. The set of
// paused jobs expires RecordTTL after the last pause: a flag older than
// that lapses, and the job runs again. Each pause's start (backend clock)
// lapses with the flags; the latest ended pause of each job
// (ControlState.Pauses) is kept until RecordTTL after the last resume.
func (p *Provider) SetPaused(ctx context.Context, job string, paused bool) error {
	if err := check.Args(ctx, batontype.ValidateName(job)); err != nil {
		return err
	}
	flag := "0"
	if paused {
		flag = "1"
	}
	keys, ch := p.controlKeys()
	if err := controlScript.Run(ctx, p.client, keys, "pause", job, flag, p.recordTTLArg, ch).Err(); err != nil {
		return opError("set paused", job, err)
	}
	return nil
}

// RequestRun implements lockprovider.Control in one script call.
func (p *Provider) RequestRun(ctx context.Context, r batontype.RunRequest) (batontype.RunRequest, error) {
	r, err := check.Request(ctx, r)
	if err != nil {
		return batontype.RunRequest{}, err
	}
	keys, ch := p.controlKeys()
	v, err := controlScript.Run(ctx, p.client, keys, "req", r.ID, r.Job+"\n"+r.RequestedBy+"\n"+r.ID, r.TTL.Milliseconds(), ch).Int64Slice()
	if err != nil {
		return batontype.RunRequest{}, opError("request run", r.Job, err)
	}
	if len(v) != 2 {
		return batontype.RunRequest{}, opError("request run", r.Job, unexpected(v))
	}
	r.Requested, r.Until = time.UnixMilli(v[0]), time.UnixMilli(v[1])
	return r, nil
}

// ClaimRun implements lockprovider.Control in one script call.
func (p *Provider) ClaimRun(ctx context.Context, id string) (batontype.RunRequest, error) {
	if err := check.Args(ctx, batontype.ValidateRunRequestID(id)); err != nil {
		return batontype.RunRequest{}, err
	}
	keys, ch := p.controlKeys()
	v, err := controlScript.Run(ctx, p.client, keys, "claim", id, ch).Result()
	if err != nil {
		return batontype.RunRequest{}, opError("claim run request", "", err)
	}
	if v == int64(0) {
		return batontype.RunRequest{}, batontype.ErrNoRequest
	}
	s, _ := v.(string)
	r, ok := parseRequest(id, s)
	if !ok {
		return batontype.RunRequest{}, opError("claim run request", "", unexpected(v))
	}
	return r, nil
}

// ControlState implements lockprovider.Control in one script call.
func (p *Provider) ControlState(ctx context.Context) (batontype.ControlState, error) {
	if err := lockprovider.CheckContext(ctx); err != nil {
		return batontype.ControlState{}, err
	}
	keys, ch := p.controlKeys()
	v, err := controlScript.Run(ctx, p.client, keys, "state", ch).Slice()
	if err != nil {
		return batontype.ControlState{}, opError("control state", "", err)
	}
	bad := func() (batontype.ControlState, error) {
		return batontype.ControlState{}, opError("control state", "", unexpected(v))
	}
	if len(v) < 2 {
		return bad()
	}
	n, ok := keyspace.Int(v[1])
	if !ok || int(n) > len(v)-2 {
		return bad()
	}
	var st batontype.ControlState
	for _, x := range v[2 : 2+n] {
		s, ok := x.(string)
		if !ok {
			return bad()
		}
		st.Paused = append(st.Paused, s)
	}
	slices.Sort(st.Paused)
	rest := v[2+n:]
	if len(rest) < 1 {
		return bad()
	}
	m, ok := keyspace.Int(rest[0])
	if !ok || int(m) > len(rest)-1 {
		return bad()
	}
	for _, x := range rest[1 : 1+m] {
		s, _ := x.(string)
		sp, ok := parsePauseSpan(s)
		if !ok {
			return bad()
		}
		st.Pauses = append(st.Pauses, sp)
	}
	batontype.SortPauses(st.Pauses)
	for _, x := range rest[1+m:] {
		s, _ := x.(string)
		r, ok := parseRequest("", s)
		if !ok {
			return bad()
		}
		st.Requests = append(st.Requests, r)
	}
	slices.SortFunc(st.Requests, func(a, b batontype.RunRequest) int { return a.Requested.Compare(b.Requested) })
	return st, nil
}

// parseRequest decodes a stored request (see control.lua): requested,
// until, job, by and id, each on its own line. A non-empty id must match.
func parseRequest(id, s string) (batontype.RunRequest, bool) {
	f := strings.SplitN(s, "\n", 5)
	if len(f) != 5 {
		return batontype.RunRequest{}, false
	}
	req, err1 := strconv.ParseInt(f[0], 10, 64)
	until, err2 := strconv.ParseInt(f[1], 10, 64)
	if err1 != nil || err2 != nil || (id != "" && f[4] != id) {
		return batontype.RunRequest{}, false
	}
	return batontype.RunRequest{ID: f[4], Job: f[2], RequestedBy: f[3], Requested: time.UnixMilli(req), Until: time.UnixMilli(until)}, true
}

// parsePauseSpan decodes a pause span of the state script (see
// control.lua): job, from and until (ms; empty while paused), each on its
// own line.
func parsePauseSpan(s string) (batontype.PauseSpan, bool) {
	f := strings.SplitN(s, "\n", 3)
	if len(f) != 3 {
		return batontype.PauseSpan{}, false
	}
	from, err := strconv.ParseInt(f[1], 10, 64)
	if err != nil {
		return batontype.PauseSpan{}, false
	}
	sp := batontype.PauseSpan{Job: f[0], From: time.UnixMilli(from)}
	if f[2] != "" {
		until, err := strconv.ParseInt(f[2], 10, 64)
		if err != nil {
			return batontype.PauseSpan{}, false
		}
		sp.Until = time.UnixMilli(until)
	}
	return sp, true
}

// WatchControl implements lockprovider.Control: a sharded pub/sub
// subscription to the control channel, carried by the provider's release
// subscriptions (see NotifyRelease), with the same reconnect behaviour.
func (p *Provider) WatchControl(ctx context.Context, ch chan<- struct{}) (stop func(), err error) {
	if stop, err := check.LiveWatch(ctx, lockprovider.ValidateWatch(ch)); err != nil {
		return stop, err
	}
	_, channel := p.controlKeys()
	return p.notify.add(ctx, channel, ch)
}
