package main

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
	"unicode/utf8"
)

// emit writes v as indented JSON, or rows as an aligned table.
func (c *cli) emit(v any, header []string, rows [][]string) {
	if c.opts.output == "json" {
		enc := json.NewEncoder(c.stdout)
		enc.SetIndent("", "  ")
		_ = enc.Encode(v)
		return
	}
	if len(rows) == 0 && c.failed != 0 {
		return // an empty table under a backend's error would read as "none"
	}
	tw := tabwriter.NewWriter(c.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, strings.Join(header, "\t"))
	for _, r := range rows {
		fmt.Fprintln(tw, strings.Join(r, "\t"))
	}
	_ = tw.Flush()
}

// when formats t for a table: UTC to the second, with how long ago or
// ahead it is; "-" for the zero time.
func (c *cli) when(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	d := t.Sub(c.now).Round(time.Second)
	rel := "in " + d.String()
	if d < 0 {
		rel = (-d).String() + " ago"
	}
	return t.UTC().Format("2006-01-02T15:04:05Z") + " (" + rel + ")"
}

func stamp(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.UTC().Format("2006-01-02T15:04:05Z")
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// moment formats t for a table: with --wide as when does, else only how
// long ago or ahead it is ("in 11h59m", "12m ago"), which keeps the
// tables within about 120 columns; -o json has the times themselves.
func (c *cli) moment(t time.Time) string {
	if c.opts.wide || t.IsZero() {
		return c.when(t)
	}
	d := t.Sub(c.now)
	if d < 0 {
		return short(-d) + " ago"
	}
	return "in " + short(d)
}

// ago is moment for a time in the past (a run's start, a grant): one a
// little ahead of this machine's clock (the backend's clock is ahead)
// reads "<1s ago", never "in 4s".
func (c *cli) ago(t time.Time) string {
	if !c.opts.wide && t.After(c.now) {
		return "<1s ago"
	}
	return c.moment(t)
}

// short is d rounded down to what a glance needs: "<1s", "42s", "12m",
// "11h59m", "3d4h" (--wide and -o json give the times themselves).
func short(d time.Duration) string {
	const day = 24 * time.Hour
	switch {
	case d < time.Second:
		return "<1s"
	case d < time.Minute:
		return d.Truncate(time.Second).String()
	case d >= day:
		s := strconv.FormatInt(int64(d/day), 10) + "d"
		if h := (d % day) / time.Hour; h > 0 {
			s += strconv.FormatInt(int64(h), 10) + "h"
		}
		return s
	}
	if d < time.Hour {
		return strconv.FormatInt(int64(d/time.Minute), 10) + "m"
	}
	s := strconv.FormatInt(int64(d/time.Hour), 10) + "h"
	if m := (d % time.Hour) / time.Minute; m > 0 {
		s += strconv.FormatInt(int64(m), 10) + "m"
	}
	return s
}

// cut makes s one line and, without --wide, at most n bytes, cut
// between runes and ending in "...". It reports whether it cut.
func (c *cli) cut(s string, n int) (string, bool) {
	s = strings.ReplaceAll(s, "\n", " ")
	if c.opts.wide || len(s) <= n {
		return s, false
	}
	k := n - 3
	for k > 0 && !utf8.RuneStart(s[k]) {
		k--
	}
	return s[:k] + "...", true
}

// brief drops, without --wide, the zero minutes and seconds Go prints
// after whole hours or minutes: "@every 24h0m0s" reads "@every 24h".
func (c *cli) brief(s string) string {
	if c.opts.wide {
		return s
	}
	return strings.ReplaceAll(strings.ReplaceAll(s, "h0m0s", "h"), "m0s", "m")
}
