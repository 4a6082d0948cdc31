package main

import (
	"bufio"
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/user"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/baton-go/baton/batontype"

	"github.com/baton-go/baton/lockprovider"
)

type lockJSON struct {
	Backend   string    `json:"backend"`
	Name      string    `json:"name"`
	Held      bool      `json:"held"`
	LockedBy  string    `json:"locked_by"`
	Token     int64     `json:"token"`
	GrantedAt time.Time `json:"granted_at,omitzero"`
	Until     time.Time `json:"until,omitzero"`
	// AtLeastUntil is the lease's minimum hold (AtLeastFor): released
	// before it, the lease stays held until then.
	AtLeastUntil time.Time `json:"at_least_until,omitzero"`
	LastTick     time.Time `json:"last_tick,omitzero"`
}

func toLockJSON(backend string, i batontype.LeaseInfo) lockJSON {
	return lockJSON{Backend: backend, Name: i.Name, Held: i.Held, LockedBy: i.LockedBy, Token: i.Token,
		GrantedAt: i.GrantedAt, Until: i.Until, AtLeastUntil: i.AtLeastUntil, LastTick: i.LastTick}
}

func (c *cli) lockRows(ls []lockJSON) [][]string {
	rows := make([][]string, 0, len(ls))
	for _, l := range ls {
		until, atLeast := c.moment(l.Until), c.moment(l.AtLeastUntil)
		// A bound that has passed binds nothing; an extension without
		// AtLeastFor also stores its own time there, which would read as
		// a minimum hold the holder never asked for.
		if !l.AtLeastUntil.After(c.now) {
			atLeast = "-"
		}
		if !l.Held {
			until, atLeast = "released/expired", "-"
		}
		granted, tick := stamp(l.GrantedAt), stamp(l.LastTick)
		if !c.opts.wide { // how long ago, to fit about 120 columns
			granted, tick = dash(c.brief(c.ago(l.GrantedAt))), dash(c.brief(c.ago(l.LastTick)))
		}
		rows = append(rows, []string{l.Name, l.Backend, yesNo(l.Held), dash(l.LockedBy), strconv.FormatInt(l.Token, 10),
			granted, until, atLeast, tick})
	}
	return rows
}

var lockHeader = []string{"NAME", "BACKEND", "HELD", "HOLDER", "TOKEN", "GRANTED", "UNTIL", "AT LEAST", "LAST TICK"}

func lockCommands() []command {
	var (
		force, yes bool
		all        bool
	)
	return []command{
		{
			group: "locks", name: "ls", help: "list locks: holder, token, granted, until, at-least bound (--all: also free ones)",
			flags: func(fs *flag.FlagSet) { fs.BoolVar(&all, "all", false, "also list names whose lease ended") },
			run: func(c *cli, ctx context.Context, fs *flag.FlagSet) int {
				if !c.needArgs(fs, 0) {
					return exitUsage
				}
				out := []lockJSON{}
				for _, b := range c.backends {
					in, ok := b.p.(lockprovider.Inspector)
					if !ok {
						continue
					}
					infos, err := in.List(ctx)
					if err != nil {
						c.fail(b, "list locks", err)
						continue
					}
					// By name, as the providers list in no particular order.
					slices.SortFunc(infos, func(a, b batontype.LeaseInfo) int { return strings.Compare(a.Name, b.Name) })
					for _, i := range infos {
						if i.Held || all {
							out = append(out, toLockJSON(b.name, i))
						}
					}
				}
				c.emit(out, lockHeader, c.lockRows(out))
				return c.exit(exitOK)
			},
		},
		{
			group: "locks", name: "get", args: "NAME", help: "show one lock",
			run: func(c *cli, ctx context.Context, fs *flag.FlagSet) int {
				if !c.needArgs(fs, 1) {
					return exitUsage
				}
				out := []lockJSON{}
				for _, b := range c.backends {
					in, ok := b.p.(lockprovider.Inspector)
					if !ok {
						continue
					}
					i, err := in.Inspect(ctx, fs.Arg(0))
					if err != nil {
						c.fail(b, "inspect", err)
						continue
					}
					if i.Exists {
						out = append(out, toLockJSON(b.name, i))
					}
				}
				if len(out) == 0 && c.failed != 0 {
					return c.failed // not found where it could be read: unknown
				}
				if len(out) == 0 {
					fmt.Fprintf(c.stderr, "baton: lock %q not found\n", fs.Arg(0))
					return exitNotFound
				}
				c.emit(out, lockHeader, c.lockRows(out))
				if !slices.ContainsFunc(out, func(l lockJSON) bool { return l.Held }) {
					// The record shows who held it last; scripts ask
					// "is it held?", which it is not.
					fmt.Fprintf(c.stderr, "baton: lock %q is free: no lease is in force\n", fs.Arg(0))
					return c.exit(exitNotFound)
				}
				return c.exit(exitOK)
			},
		},
		{
			group: "locks", name: "release", args: "--force NAME",
			help: "free a held lock now (shows holder and token, asks unless --yes; its run records cli:$USER@HOST)",
			flags: func(fs *flag.FlagSet) {
				fs.BoolVar(&force, "force", false, "required: release a lease held by someone else")
				fs.BoolVar(&yes, "yes", false, "do not ask for confirmation")
			},
			run: func(c *cli, ctx context.Context, fs *flag.FlagSet) int {
				if !c.needArgs(fs, 1) {
					return exitUsage
				}
				if !force {
					fmt.Fprintln(c.stderr, "baton: locks release frees a lease someone else holds; pass --force to confirm that is what you want")
					return exitUsage
				}
				return c.forceRelease(ctx, fs.Arg(0), yes)
			},
		},
	}
}

// forceRelease shows the holder of name on each backend, asks, and frees
// exactly the lease shown (by its token).
func (c *cli) forceRelease(ctx context.Context, name string, yes bool) int {
	type target struct {
		b    backend
		a    lockprovider.Admin
		info batontype.LeaseInfo
	}
	var targets []target
	for _, b := range c.backends {
		in, ok1 := b.p.(lockprovider.Inspector)
		a, ok2 := b.p.(lockprovider.Admin)
		if !ok1 || !ok2 {
			continue
		}
		i, err := in.Inspect(ctx, name)
		if err != nil {
			return c.fail(b, "inspect", err)
		}
		if i.Held {
			targets = append(targets, target{b, a, i})
		}
	}
	if len(targets) == 0 {
		fmt.Fprintf(c.stderr, "baton: lock %q is not held\n", name)
		return exitNotFound
	}
	in := bufio.NewScanner(c.stdin)
	out := []lockJSON{}
	by := cliOperator()
	for _, t := range targets {
		i := t.info
		if !yes {
			minHold := ""
			if i.AtLeastUntil.After(c.now) {
				minHold = fmt.Sprintf(" (its minimum hold, which this release cuts short, lasts until %s)", c.when(i.AtLeastUntil))
			}
			fmt.Fprintf(c.stderr, "Lock %q on %s is held by %s with token %d since %s, until %s%s.\nRelease it now? The holder keeps running until it notices; fenced writes reject it once the next holder has written. [y/N] ",
				name, t.b.name, dash(i.LockedBy), i.Token, stamp(i.GrantedAt), c.when(i.Until), minHold)
			ans := ""
			if in.Scan() {
				ans = strings.ToLower(strings.TrimSpace(in.Text()))
			}
			if ans != "y" && ans != "yes" {
				fmt.Fprintln(c.stderr, "baton: not released")
				return exitAborted
			}
		}
		// --timeout bounds the backend calls, not the operator's answer.
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), c.opts.timeout)
		freed, err := t.a.ForceRelease(rctx, lockprovider.ForceReleaseParams{Name: name, Token: i.Token, By: by})
		cancel()
		if errors.Is(err, batontype.ErrNotHeld) {
			fmt.Fprintf(c.stderr, "baton: %s: lock %q changed hands or ended before the release; nothing freed\n", t.b.name, name)
			return exitNotFound
		}
		if err != nil {
			return c.fail(t.b, "force-release", err)
		}
		out = append(out, toLockJSON(t.b.name, freed))
		if c.opts.output == "table" {
			fmt.Fprintf(c.stdout, "released %q on %s: was held by %s with token %d; the next grant gets a larger token; a run of that lease is marked force-released by %s\n",
				name, t.b.name, dash(freed.LockedBy), freed.Token, by)
		}
	}
	if c.opts.output == "json" {
		c.emit(out, nil, nil)
	}
	return exitOK
}

// cliOperator names the operator of a force-release as the ledger records
// it on the run (batontype.RunRecord.ReleasedBy): "cli:USER@HOST", USER
// from $USER or else the process's account, HOST the machine's name. It
// is made valid as the field requires (no control characters, at most
// batontype.MaxLockedByLen bytes), so an odd environment never blocks the
// release.
func cliOperator() string {
	u := os.Getenv("USER")
	if u == "" {
		if cu, err := user.Current(); err == nil {
			u = cu.Username
		}
	}
	h, err := os.Hostname()
	if err != nil {
		h = ""
	}
	s := "cli:" + cmp.Or(u, "unknown") + "@" + cmp.Or(h, "unknown")
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return '?'
		}
		return r
	}, strings.ToValidUTF8(s, "?"))
	return batontype.Shorten(s, batontype.MaxLockedByLen-len("…"))
}
