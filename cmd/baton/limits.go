package main

import (
	"context"
	"flag"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/baton-go/baton/batontype"

	"github.com/baton-go/baton/lockprovider"
	"github.com/baton-go/baton/status"
)

type limitJSON struct {
	Backend   string    `json:"backend"`
	Key       string    `json:"key"`
	Algorithm string    `json:"algorithm"`
	Period    string    `json:"period"`
	PeriodMS  int64     `json:"period_ms"`
	ResetAt   time.Time `json:"reset_at,omitzero"`
	// With --limit: the limit, what it would admit now, and the state
	// (over, near: at most a tenth of the capacity left, ok; unknown: the
	// key has stored state, none of it for this limit's algorithm and
	// period, so the limit is not the one the application uses).
	Limit        string `json:"limit,omitempty"`
	Remaining    *int64 `json:"remaining,omitempty"`
	ResetAfter   string `json:"reset_after,omitempty"`
	ResetAfterMS *int64 `json:"reset_after_ms,omitempty"`
	State        string `json:"state,omitempty"`
}

// limitFlags collects repeated --limit flags.
type limitFlags []batontype.RateLimit

func (l *limitFlags) String() string { return fmt.Sprint(len(*l)) }

// Set parses "<algorithm>:<limit>/<period>[:<burst>]", e.g. gcra:100/1m:20.
func (l *limitFlags) Set(s string) error {
	alg, rest, ok := strings.Cut(s, ":")
	n, rest2, ok2 := strings.Cut(rest, "/")
	if !ok || !ok2 {
		return fmt.Errorf("want <algorithm>:<limit>/<period>[:<burst>], e.g. gcra:100/1m")
	}
	per, burst, hasBurst := strings.Cut(rest2, ":")
	var rl batontype.RateLimit
	for a := batontype.FixedWindow; a <= batontype.GCRA; a++ {
		if a.String() == alg {
			rl.Algorithm = a
		}
	}
	if rl.Algorithm == 0 {
		return fmt.Errorf("unknown algorithm %q (fixed_window, sliding_log, sliding_window, token_bucket, gcra)", alg)
	}
	var err error
	if rl.Rate, err = strconv.ParseInt(n, 10, 64); err != nil {
		return fmt.Errorf("limit %q: %v", n, err)
	}
	if rl.Period, err = time.ParseDuration(per); err != nil {
		return fmt.Errorf("period %q: %v", per, err)
	}
	if hasBurst {
		if rl.Burst, err = strconv.ParseInt(burst, 10, 64); err != nil {
			return fmt.Errorf("burst %q: %v", burst, err)
		}
	}
	if err := rl.Validate(); err != nil {
		return err
	}
	*l = append(*l, rl)
	return nil
}

func limitCommands() []command {
	var (
		limits limitFlags
		near   bool
	)
	return []command{
		{
			group: "limits", name: "ls", help: "list rate-limit keys with live state and when each is full again; with --limit, what remains and which are near or over",
			flags: func(fs *flag.FlagSet) {
				fs.Var(&limits, "limit", "the application's limit, <algorithm>:<limit>/<period>[:<burst>] (repeatable): each key whose state has its algorithm and period is peeked, one round trip per key, without charging")
				fs.BoolVar(&near, "near", false, "with --limit: list only keys near (at most a tenth of the capacity left) or over their limit")
			},
			run: func(c *cli, ctx context.Context, fs *flag.FlagSet) int {
				if !c.needArgs(fs, 0) {
					return exitUsage
				}
				if near && len(limits) == 0 {
					fmt.Fprintln(c.stderr, "baton: --near needs --limit: the backend stores state, not limits")
					return exitUsage
				}
				out, code := c.listLimits(ctx, "")
				if code != exitOK {
					return code
				}
				if len(limits) > 0 {
					if out, code = c.peekListed(ctx, out, limits, near); code != exitOK {
						return code
					}
				}
				c.emitLimits(out)
				return c.exit(exitOK)
			},
		},
		{
			group: "limits", name: "get", args: "KEY", help: "show a key's state; with --limit, what it would admit now",
			flags: func(fs *flag.FlagSet) {
				fs.Var(&limits, "limit", "the application's limit, <algorithm>:<limit>/<period>[:<burst>] (repeatable); peeks without charging")
			},
			run: func(c *cli, ctx context.Context, fs *flag.FlagSet) int {
				if !c.needArgs(fs, 1) {
					return exitUsage
				}
				key := fs.Arg(0)
				if err := batontype.ValidateName(key); err != nil { // "" would list every key
					fmt.Fprintln(c.stderr, err)
					return exitUsage
				}
				if len(limits) > 0 {
					return c.peekLimits(ctx, key, limits)
				}
				out, code := c.listLimits(ctx, key)
				if code != exitOK {
					return code
				}
				if len(out) == 0 && c.failed != 0 {
					return c.failed
				}
				if len(out) == 0 {
					fmt.Fprintf(c.stderr, "baton: rate-limit key %q has no state (it is at full capacity)\n", key)
					return exitNotFound
				}
				c.emitLimits(out)
				return c.exit(exitOK)
			},
		},
		{
			group: "limits", name: "reset", args: "KEY", help: "give a rate-limit key its full capacity back",
			run: func(c *cli, ctx context.Context, fs *flag.FlagSet) int {
				if !c.needArgs(fs, 1) {
					return exitUsage
				}
				key := fs.Arg(0)
				if err := batontype.ValidateName(key); err != nil {
					fmt.Fprintln(c.stderr, err)
					return exitUsage
				}
				// A key without state is already at full capacity: resetting
				// it would report success for a misspelt key and leave the
				// real one limited, so it is "not found", as for limits get.
				listed, code := c.listLimits(ctx, key)
				if code != exitOK {
					return code
				}
				reset := 0
				for _, b := range c.backends {
					a, ok := b.p.(lockprovider.Admin)
					if !ok {
						continue
					}
					_, lister := b.p.(lockprovider.RateLister)
					if lister && !slices.ContainsFunc(listed, func(l limitJSON) bool { return l.Backend == b.name }) {
						continue
					}
					if err := a.ResetRate(ctx, key); err != nil {
						return c.fail(b, "reset", err)
					}
					reset++
					if c.opts.output == "table" {
						fmt.Fprintf(c.stdout, "reset %q on %s\n", key, b.name)
					}
				}
				if reset == 0 && c.failed != 0 {
					return c.failed
				}
				if reset == 0 {
					fmt.Fprintf(c.stderr, "baton: rate-limit key %q has no state (it is at full capacity); nothing reset\n", key)
					return exitNotFound
				}
				if c.opts.output == "json" {
					c.emit(map[string]any{"reset": key}, nil, nil)
				}
				return c.exit(exitOK)
			},
		},
	}
}

func (c *cli) listLimits(ctx context.Context, key string) ([]limitJSON, int) {
	out := []limitJSON{}
	for _, b := range c.backends {
		ls, ok := b.p.(lockprovider.RateLister)
		if !ok {
			continue
		}
		infos, err := ls.ListRates(ctx)
		if err != nil {
			c.fail(b, "list rate limits", err) // the other backends' keys are still listed
			continue
		}
		for _, i := range infos {
			if key == "" || i.Key == key {
				out = append(out, limitJSON{Backend: b.name, Key: i.Key, Algorithm: i.Algorithm.String(), Period: i.Period.String(),
					PeriodMS: i.Period.Milliseconds(), ResetAt: i.ResetAt})
			}
		}
	}
	return out, exitOK
}

func (c *cli) emitLimits(out []limitJSON) {
	rows := make([][]string, 0, len(out))
	for _, l := range out {
		rem := "-"
		if l.Remaining != nil {
			rem = strconv.FormatInt(*l.Remaining, 10)
		}
		reset := c.moment(l.ResetAt)
		if l.ResetAfter != "" {
			reset = "in " + l.ResetAfter
		}
		rows = append(rows, []string{l.Key, l.Backend, l.Algorithm, c.brief(l.Period), c.brief(dash(l.Limit)), rem, reset, dash(l.State)})
	}
	c.emit(out, []string{"KEY", "BACKEND", "ALGORITHM", "PERIOD", "LIMIT", "REMAINING", "FULL AGAIN", "STATE"}, rows)
}

// peekListed fills in, for each listed key state whose algorithm and
// period one of limits has, what that limit would admit now (one peek per
// key and backend, charging nothing); with near it keeps only the keys
// near or over a limit.
func (c *cli) peekListed(ctx context.Context, listed []limitJSON, limits []batontype.RateLimit, near bool) ([]limitJSON, int) {
	type peeked struct{ backend, key string }
	answers := map[peeked][]lockprovider.RateState{}
	out := listed[:0]
	unjudged := 0
	for _, l := range listed {
		k := -1
		for i, lim := range limits {
			if lim.Algorithm.String() == l.Algorithm && lim.Period.String() == l.Period {
				k = i
			}
		}
		if k < 0 {
			unjudged++
			if !near {
				out = append(out, l)
			}
			continue
		}
		var b backend
		for _, cb := range c.backends {
			if cb.name == l.Backend {
				b = cb
			}
		}
		rl, ok := b.p.(lockprovider.RateLimiter)
		if !ok {
			if !near {
				out = append(out, l)
			}
			continue
		}
		res, ok := answers[peeked{l.Backend, l.Key}]
		if !ok {
			r, err := rl.RateLimit(ctx, lockprovider.RateRequest{Key: l.Key, N: 0, Limits: limits})
			if err != nil {
				c.fail(b, "rate limit of "+l.Key, err)
				continue
			}
			res = r.Limits
			answers[peeked{l.Backend, l.Key}] = res
		}
		lim, rem := limits[k], res[k].Remaining
		l.Limit, l.Remaining, l.State = limitSpec(lim), &rem, status.LimitState(lim, rem)
		after := res[k].ResetAfter.Round(time.Millisecond)
		l.ResetAfter, l.ResetAfterMS = after.String(), new(after.Milliseconds())
		if !near || l.State != "ok" {
			out = append(out, l)
		}
	}
	if unjudged > 0 {
		// A key limited under another algorithm or period is not "ok":
		// no --limit given judges it.
		also := ""
		if near {
			also = " (and not listed with --near)"
		}
		fmt.Fprintf(c.stderr, "baton: %d key state(s) have an algorithm and period that no --limit has: not judged%s\n", unjudged, also)
	}
	return out, exitOK
}

// limitSpec shows a limit as the table and JSON give it.
func limitSpec(l batontype.RateLimit) string {
	spec := fmt.Sprintf("%d/%v", l.Rate, l.Period)
	if l.Burst > 0 {
		spec += fmt.Sprintf(" burst %d", l.Burst)
	}
	return spec
}

// peekLimits asks each backend what the limits would admit now, charging
// nothing (a RateLimit with N 0). A limit whose algorithm and period
// match none of the key's stored state, when it has some, contradicts it:
// the application limits the key otherwise, and a peek would report the
// full capacity of a limit nobody applies, so its state is "unknown".
func (c *cli) peekLimits(ctx context.Context, key string, limits []batontype.RateLimit) int {
	stored, _ := c.listLimits(ctx, key) // a failure is reported; the peek still runs
	out := []limitJSON{}
	for _, b := range c.backends {
		rl, ok := b.p.(lockprovider.RateLimiter)
		if !ok {
			continue
		}
		res, err := rl.RateLimit(ctx, lockprovider.RateRequest{Key: key, N: 0, Limits: limits})
		if err != nil {
			c.fail(b, "rate limit", err)
			continue
		}
		var here []string // the key's stored state on b
		for _, st := range stored {
			if st.Backend == b.name {
				here = append(here, st.Algorithm+"/"+st.Period)
			}
		}
		for i, l := range limits {
			st := res.Limits[i]
			rem := st.Remaining
			after := st.ResetAfter.Round(time.Millisecond)
			lj := limitJSON{Backend: b.name, Key: key, Algorithm: l.Algorithm.String(), Period: l.Period.String(),
				PeriodMS: l.Period.Milliseconds(), Limit: limitSpec(l), Remaining: &rem, ResetAfter: after.String(),
				ResetAfterMS: new(after.Milliseconds()), State: status.LimitState(l, rem)}
			if len(here) > 0 && !slices.Contains(here, lj.Algorithm+"/"+lj.Period) {
				lj.Remaining, lj.ResetAfter, lj.ResetAfterMS, lj.State = nil, "", nil, "unknown"
				fmt.Fprintf(c.stderr, "baton: %s: %q has state for %s, not for --limit %s:%s: this is not the limit the application applies to it\n",
					b.name, key, strings.Join(here, ", "), lj.Algorithm, limitSpec(l))
			}
			out = append(out, lj)
		}
	}
	c.emitLimits(out)
	return c.exit(exitOK)
}
