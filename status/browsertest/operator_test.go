package browsertest

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
	"github.com/jackc/pgx/v5/pgxpool"
	goredis "github.com/redis/go-redis/v9"

	"github.com/baton-go/baton/batontype"
	"github.com/baton-go/baton/internal/testenv"
	"github.com/baton-go/baton/internal/testenv/redisenv"
	"github.com/baton-go/baton/lockprovider"
	pgprovider "github.com/baton-go/baton/lockprovider/postgres"
	redisprovider "github.com/baton-go/baton/lockprovider/redis"
	"github.com/baton-go/baton/scheduler"
	"github.com/baton-go/baton/status"
	"github.com/baton-go/baton/status/internal/synth"
)

var docShots = flag.Bool("docshots", false, "write the README's screenshots of the status page to docs/")

// docShot writes png to docs/name when -docshots is set, and always to
// the test's directory.
func docShot(t *testing.T, name string, png []byte) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(t.TempDir(), name), png, 0o644); err != nil {
		t.Fatal(err)
	}
	if *docShots {
		if err := os.WriteFile(filepath.Join("..", "..", "docs", name), png, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// refreshes waits until the page has refreshed its view n more times.
func refreshes(t *testing.T, ctx context.Context, n int) {
	t.Helper()
	start := get(t, ctx, chromedp.Evaluate[string](`document.body.dataset.refreshes || "0"`))
	k, _ := strconv.Atoi(start)
	get(t, ctx, chromedp.Poll[bool](fmt.Sprintf(`Number(document.body.dataset.refreshes || 0) >= %d`, k+n), chromedp.WithPollingTimeout(30*time.Second)))
}

func darkMode(on bool) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		p := emulation.SetEmulatedMediaParams{}
		if on {
			p.Features = []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: "dark"}}
		}
		_, err := cdp.Call(ctx, t, emulation.SetEmulatedMedia, p)
		return err
	})
}

// TestBrowserOperator drives what an operator does at 3 a.m. on three
// scheduler instances in Redis (ledger on, run-now, pause and resume
// through the page): a job paused cluster-wide and one paused on every
// replica show as paused in the Jobs view and the timeline, never as
// missed; the job page shows the history, a failed run's whole error and
// a panicked run's stack; an armed force-release stays armed through
// three refreshes; run-now is followed to its outcome; run-now of a job
// that does not exist is 404; and at 1,280 × 800 every action button of
// the Jobs view is on screen.
func TestBrowserOperator(t *testing.T) {
	bctx := browser(t)
	ctx := t.Context()
	rp, err := redisprovider.New(redisenv.Client(t), &redisprovider.Config{Prefix: testenv.Prefix(t)})
	if err != nil {
		t.Fatal(err)
	}
	longErr := "upstream said 503: " + strings.Repeat("the billing gateway answered Service Unavailable, ", 4) + "\nretry-after: 30s (request id 7f3a)"
	type job struct {
		name  string
		every time.Duration
		fn    scheduler.Func
	}
	jobs := []job{
		{"nightly-invoices", time.Second, func(ctx context.Context, run scheduler.Run) error { return nil }},
		{"customer-sync", time.Second, func(ctx context.Context, run scheduler.Run) error { return errors.New(longErr) }},
		{"thumbnails", time.Second, func(ctx context.Context, run scheduler.Run) error { panic("thumbnail decoder: nil image") }},
		{"ledger-export", time.Second, func(ctx context.Context, run scheduler.Run) error { return nil }},
		{"reindex", time.Second, func(ctx context.Context, run scheduler.Run) error { return nil }},
		{"manual-report", time.Hour, func(ctx context.Context, run scheduler.Run) error { time.Sleep(300 * time.Millisecond); return nil }},
	}
	// ledger-export is paused cluster-wide before anything runs; reindex
	// is paused on each replica's own instance.
	if err := rp.SetPaused(ctx, "ledger-export", true); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		s, err := scheduler.New(rp, &scheduler.Config{LockedBy: "replica-" + strconv.Itoa(i+1), Ledger: true, RegistryTTL: 5 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		for _, j := range jobs {
			sj, err := s.Every(j.every).Locked(j.name, scheduler.AtMostFor(time.Minute)).Do(j.fn)
			if err != nil {
				t.Fatal(err)
			}
			if j.name == "reindex" {
				sj.Pause()
			}
		}
		// An unlocked job: each replica's latest run is in the registry.
		if _, err := s.Every(time.Second).Do(func(ctx context.Context, run scheduler.Run) error { return nil }); err != nil {
			t.Fatal(err)
		}
		if err := s.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			_ = s.Shutdown(ctx)
		})
	}
	hold := func(name string) batontype.Lease {
		l, err := rp.Acquire(ctx, lockprovider.AcquireParams{Name: name, Owner: lockprovider.NewOwner(), AtMostFor: 5 * time.Minute, LockedBy: "billing-7"})
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	lease := hold("payments")

	h, err := status.New(&status.Config{
		Backends: []status.Backend{
			{Name: "redis", Provider: rp, Source: "prefix " + strconv.Quote(testenv.Prefix(t)), Control: status.ProviderControl(rp, "browser test")},
		},
		Actions: true, Grace: time.Second, Refresh: time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	time.Sleep(5 * time.Second) // a few runs of each job

	// Jobs: problems first, both paused jobs paused, one toggle each.
	open(t, bctx, srv.URL+"/#jobs", "jobs")
	type row struct{ Job, State, Replicas, Title, Buttons, Last, LastTitle string }
	// A failing job whose newest run is still open is running, not
	// failed (jobstate.State): read the rows between their runs (they
	// return at once, every second; the page refreshes every second).
	var rows []row
	for deadline := time.Now().Add(30 * time.Second); ; {
		rows = get(t, bctx, chromedp.Evaluate[[]row](`[...document.querySelectorAll("#jobs-table tbody tr")].map((r) => ({Job: r.dataset.job, State: r.dataset.state,
		Replicas: r.querySelector("td.replicas").textContent, Title: r.querySelector("td.replicas").title,
		Last: r.children[4].textContent, LastTitle: r.children[4].title,
		Buttons: [...r.querySelectorAll("button")].map((b) => b.textContent).join(",")}))`))
		if !slices.ContainsFunc(rows, func(r row) bool {
			return r.State == "running" && (r.Job == "customer-sync" || r.Job == "thumbnails")
		}) || time.Now().After(deadline) {
			break
		}
		time.Sleep(200 * time.Millisecond) // poll interval of a deadline-bounded wait
	}
	states := map[string]string{}
	order := []string{}
	for _, r := range rows {
		states[r.Job] = r.State
		order = append(order, strings.Replace(r.State, "running", "ok", 1)) // a run may be going
		wantButtons := "run now,pause"
		if r.Job == "ledger-export" {
			wantButtons = "run now,resume"
		}
		if r.State == "unlocked" && (!strings.Contains(r.Last, "succeeded") || !strings.Contains(r.LastTitle, "replica-1: succeeded") || !strings.Contains(r.LastTitle, "replica-3: succeeded")) {
			t.Errorf("unlocked job's last run %q, per replica %q", r.Last, r.LastTitle)
		}
		if r.Replicas != "3/3" || !strings.Contains(r.Title, "replica-1, replica-2, replica-3") || r.Buttons != wantButtons {
			t.Errorf("jobs row %+v, want replicas 3/3 with names on hover and buttons %s", r, wantButtons)
		}
	}
	if states["ledger-export"] != "paused" || states["reindex"] != "paused" || states["customer-sync"] != "failed" || states["thumbnails"] != "failed" || states["nightly-invoices"] != "ok" {
		t.Errorf("job states %v", states)
	}
	if got := strings.Join(order, " "); got != "failed failed paused paused ok ok unlocked" {
		t.Errorf("jobs listed in states %q, want problems first", got)
	}
	// Filters live in the address.
	open(t, bctx, srv.URL+"/#jobs?state=paused", "jobs")
	if n := get(t, bctx, chromedp.Evaluate[int](`document.querySelectorAll("#jobs-table tbody tr[data-state=paused]").length + 10 * document.querySelectorAll("#jobs-table tbody tr:not([data-state=paused])").length`)); n != 2 {
		t.Errorf("filtered on paused: %d paused rows + 10 × other rows", n)
	}
	do(t, bctx, chromedp.SetValue(chromedp.CSS("#jobs-state"), "problems"), chromedp.Evaluate[chromedp.Void](`document.getElementById("jobs-state").dispatchEvent(new Event("change"))`))
	if hash := get(t, bctx, chromedp.Poll[string](`location.hash.includes("state=problems") && location.hash`)); !strings.Contains(hash, "state=problems") {
		t.Errorf("filter not in the address: %s", hash)
	}

	// Timeline: the paused jobs' ticks are paused, none missed.
	open(t, bctx, srv.URL+"/#timeline?range=60000", "timeline")
	tl := get(t, bctx, chromedp.Evaluate[[]struct {
		Job, Paused         string
		PausedTicks, Missed int
		Runs                int
	}](`[...document.querySelectorAll("#timeline g.job")].map((g) => ({Job: g.dataset.job, Paused: g.dataset.paused,
		PausedTicks: g.querySelectorAll("rect.paused").length, Missed: g.querySelectorAll("rect.missed").length, Runs: g.querySelectorAll("rect.run").length}))`))
	for _, j := range tl {
		switch j.Job {
		case "ledger-export", "reindex":
			if j.Paused == "" || j.PausedTicks < 3 || j.Missed != 0 {
				t.Errorf("timeline of paused job %+v: want paused ticks and no missed one", j)
			}
		case "customer-sync", "nightly-invoices":
			if j.Paused != "" || j.PausedTicks != 0 || j.Runs < 3 {
				t.Errorf("timeline of %+v", j)
			}
		}
	}
	// The filter text goes to the address.
	do(t, bctx, chromedp.SendKeys(chromedp.CSS("#tl-filter"), "thumb"))
	get(t, bctx, chromedp.Poll[bool](`location.hash.includes("q=thumb") && document.querySelectorAll("#timeline g.job").length === 1`, chromedp.WithPollingTimeout(10*time.Second)))
	// "problems only" (in the address too) keeps the jobs with a missed
	// tick or a bad run in the range: the failing and the panicking job,
	// not the paused ones.
	// The text filter is applied after a pause in typing: wait until it
	// is gone, or the switch would be applied with it first.
	do(t, bctx, chromedp.Evaluate[chromedp.Void](`(() => { const f = document.getElementById("tl-filter"); f.value = ""; f.dispatchEvent(new Event("input")); })()`))
	get(t, bctx, chromedp.Poll[bool](`!location.hash.includes("q=") && document.querySelectorAll("#timeline g.job").length > 1`, chromedp.WithPollingTimeout(10*time.Second)))
	do(t, bctx, click("#tl-problems"))
	problems := get(t, bctx, chromedp.Poll[[]string](`(() => {
		const gs = [...document.querySelectorAll("#timeline g.job")];
		const bad = "rect.missed, rect.o-failed, rect.o-panicked, rect.o-lock_lost, rect.o-unfinished";
		return location.hash.includes("problems=1") && !location.hash.includes("q=") && gs.length > 0 && gs.every((g) => g.querySelector(bad)) && gs.map((g) => g.dataset.job);
	})()`, chromedp.WithPollingTimeout(10*time.Second)))
	for _, want := range []string{"customer-sync", "thumbnails"} {
		if !slices.Contains(problems, want) {
			t.Errorf("problems only: jobs %v; want %s among them", problems, want)
		}
	}
	for _, paused := range []string{"ledger-export", "reindex"} {
		if slices.Contains(problems, paused) {
			t.Errorf("problems only: jobs %v include the paused job %s", problems, paused)
		}
	}
	do(t, bctx, chromedp.EmulateViewport(1400, 900))
	do(t, bctx, darkMode(true))
	open(t, bctx, srv.URL+"/#timeline?range=30000", "timeline")
	if bg := get(t, bctx, chromedp.Evaluate[string](`getComputedStyle(document.body).backgroundColor`)); bg != "rgb(15, 20, 25)" {
		t.Errorf("dark mode background %s", bg)
	}
	docShot(t, "status-dark.png", get(t, bctx, chromedp.CaptureScreenshot()))
	do(t, bctx, darkMode(false))

	// The job page of the panicking job: its history, and the stack.
	open(t, bctx, srv.URL+"/#job/thumbnails?backend=redis", "job")
	page := get(t, bctx, chromedp.Evaluate[struct {
		Runs        int
		Outcomes    string
		Stack, Next string
		Title       string
	}](`({Runs: document.querySelectorAll("#runs-table tbody tr[data-token]").length,
		Outcomes: [...document.querySelectorAll("#runs-table tbody tr[data-token]")].map((r) => r.dataset.outcome).join(","),
		Stack: (document.querySelector("#runs-table details.stack pre") || {}).textContent || "",
		Next: document.getElementById("job-next").textContent, Title: document.getElementById("job-title").textContent})`))
	// The replicas that lost a tick's claim say so, the lock held or the
	// tick claimed already (published with their
	// next registry renewal, every 1.7 s here; the page refreshes too).
	skips := get(t, bctx, chromedp.Poll[[]string](`(() => { const ls = [...document.querySelectorAll("#job-skips li")]; return ls.length >= 2 ? ls.map((l) => l.dataset.replica + " " + l.textContent) : null; })()`,
		chromedp.WithPollingTimeout(20*time.Second)))
	for _, sk := range skips {
		if !strings.HasPrefix(sk, "replica-") || !strings.Contains(sk, "held ") && !strings.Contains(sk, "stale tick ") || !strings.Contains(sk, "latest ") {
			t.Errorf("job page of thumbnails, skipped ticks: %q", sk)
		}
	}
	token := get(t, bctx, redrawn(chromedp.AttributeValue(chromedp.CSS(`#runs-table tr[data-outcome="panicked"]:nth-child(2)`), "data-token"))).Value
	open(t, bctx, srv.URL+"/#job/thumbnails?backend=redis&run="+token, "job")
	get(t, bctx, chromedp.Poll[bool](`!!document.querySelector("#runs-table tr.linked details.stack[open]")`, chromedp.WithPollingTimeout(10*time.Second)))
	do(t, bctx, chromedp.Evaluate[chromedp.Void](`window.scrollTo(0, 0)`))
	docShot(t, "status-job.png", get(t, bctx, chromedp.CaptureScreenshot()))
	if page.Runs < 3 || strings.Trim(strings.NewReplacer("panicked", "", "running", "").Replace(page.Outcomes), ",") != "" || !strings.Contains(page.Stack, "goroutine") ||
		!strings.Contains(page.Stack, "operator_test.go") || !strings.Contains(page.Next, time.Now().UTC().Format("2006-01-02")) {
		t.Errorf("job page of thumbnails: %d runs (%s), next tick %q, stack %.300q", page.Runs, page.Outcomes, page.Next, page.Stack)
	}
	// The failing job's whole error, and links to each run.
	open(t, bctx, srv.URL+"/#job/customer-sync?backend=redis", "job")
	errText := get(t, bctx, redrawn(chromedp.Text(chromedp.CSS(`#runs-table tr[data-outcome="failed"] .error-text`))))
	link := get(t, bctx, redrawn(chromedp.AttributeValue(chromedp.CSS(`#runs-table tr[data-outcome="failed"] td a`), "href"))).Value
	if errText != longErr || !strings.Contains(link, "#job/customer-sync?backend=redis&run=") {
		t.Errorf("failed run: error %q (want the whole %q), link %q", errText, longErr, link)
	}
	open(t, bctx, srv.URL+"/"+link, "job")
	if _, err := chromedp.Run(bctx, chromedp.Poll[bool](`document.querySelectorAll("#runs-table tr.linked").length === 1`, chromedp.WithPollingTimeout(10*time.Second))); err != nil {
		t.Errorf("a run's link marks no row: %v", err)
	}

	// An unknown job's page, run-now and pause are 404, as the CLI exits 3.
	for _, body := range []string{`{"backend":"redis","job":"no-such-job","action":"run"}`, `{"backend":"redis","job":"no-such-job","action":"pause"}`, `{"backend":"nope","job":"customer-sync","action":"run"}`} {
		st := get(t, bctx, chromedp.Evaluate[int](`fetch("api/actions/job", {method: "POST", headers: {"Content-Type": "application/json"}, body: `+strconv.Quote(body)+`}).then((r) => r.status)`, chromedp.EvalAwaitPromise))
		if st != http.StatusNotFound {
			t.Errorf("POST %s: %d, want 404", body, st)
		}
	}
	open(t, bctx, srv.URL+"/#job/no-such-job?backend=redis", "job")
	if msg := get(t, bctx, redrawn(chromedp.Text(chromedp.CSS("#job-missing")))); !strings.Contains(msg, "no-such-job") {
		t.Errorf("page of an unknown job: %q", msg)
	}

	// Run-now asks a second click, then says requested, started on a
	// replica, and how it ended.
	open(t, bctx, srv.URL+"/#jobs", "jobs")
	run := `tr[data-job="manual-report"] button[data-action^="run|"]`
	do(t, bctx, click(run))
	if txt := get(t, bctx, redrawn(chromedp.Text(chromedp.CSS(run)))); txt != "confirm run now?" {
		t.Errorf("run now after one click: %q", txt)
	}
	do(t, bctx, click(run))
	followed, err := chromedp.Run(bctx, chromedp.Poll[string](`(() => { const n = document.body.dataset.runFollowed || ""; return n.includes("succeeded") && n; })()`, chromedp.WithPollingTimeout(30*time.Second)))
	if err != nil {
		runs, rerr := rp.Runs(ctx, batontype.RunQuery{Job: "manual-report"})
		t.Fatalf("run-now not followed to its end (%v): notice %q, ledger %+v %v", err, get(t, bctx, chromedp.Evaluate[string](`document.body.dataset.runFollowed + " | " + document.getElementById("notice").textContent`)), runs, rerr)
	}
	if !strings.Contains(followed, "requested → started on replica-") || !strings.Contains(followed, "→ succeeded in") {
		t.Errorf("run-now followed as %q", followed)
	}

	// Pause and resume: one toggle, two clicks each.
	pause := `tr[data-job="nightly-invoices"] button[data-action^="pause|"]`
	do(t, bctx, click(pause), click(pause))
	get(t, bctx, chromedp.Poll[bool](`!!document.querySelector('tr[data-job="nightly-invoices"][data-state="paused"] button[data-action^="resume|"]')`, chromedp.WithPollingTimeout(20*time.Second)))
	if st, err := rp.ControlState(ctx); err != nil || !st.IsPaused("nightly-invoices") {
		t.Errorf("after pause in the page: %+v %v", st, err)
	}
	resume := `tr[data-job="nightly-invoices"] button[data-action^="resume|"]`
	do(t, bctx, click(resume), click(resume))
	get(t, bctx, chromedp.Poll[bool](`!!document.querySelector('tr[data-job="nightly-invoices"] button[data-action^="pause|"]')`, chromedp.WithPollingTimeout(20*time.Second)))

	// At 1,280 × 800 every action button is on screen, nothing scrolls
	// sideways.
	do(t, bctx, chromedp.EmulateViewport(1280, 800))
	open(t, bctx, srv.URL+"/#jobs", "jobs")
	fit := get(t, bctx, chromedp.Evaluate[struct {
		Buttons, Outside int
		ScrollW, InnerW  int
	}](`(() => { const bs = [...document.querySelectorAll("#jobs-table button")];
		return {Buttons: bs.length, Outside: bs.filter((b) => { const r = b.getBoundingClientRect(); return r.right > innerWidth || r.left < 0 || r.bottom > innerHeight || r.width === 0; }).length,
			ScrollW: document.documentElement.scrollWidth, InnerW: innerWidth}; })()`))
	if fit.Buttons != 2*(len(jobs)+1) || fit.Outside != 0 || fit.ScrollW > fit.InnerW {
		t.Errorf("at 1280×800: %d buttons (want %d), %d off screen, page %d px wide in a %d px window", fit.Buttons, 2*(len(jobs)+1), fit.Outside, fit.ScrollW, fit.InnerW)
	}
	docShot(t, "status-jobs.png", get(t, bctx, chromedp.CaptureScreenshot()))

	// At 390 × 844 (a phone) the Jobs, Locks and Limits views and the job
	// page fit the width, each row a card, and names are whole.
	do(t, bctx, chromedp.EmulateViewport(390, 844))
	for _, v := range []struct{ hash, view, shot string }{
		{"jobs", "jobs", "status-phone-jobs.png"}, {"locks", "locks", ""}, {"limits", "limits", ""},
		{"job/thumbnails?backend=redis", "job", "status-phone-job.png"},
	} {
		open(t, bctx, srv.URL+"/#"+v.hash, v.view)
		phone := get(t, bctx, chromedp.Evaluate[struct {
			ScrollW, InnerW, Cut, Rows int
			Wide                       []string
		}](`(() => { const names = [...document.querySelectorAll("section.view:not([hidden]) td.name")];
			const wide = [...document.querySelectorAll("section.view:not([hidden]) *")].filter((e) => e.getBoundingClientRect().right > innerWidth + 1)
				.slice(0, 5).map((e) => e.tagName + (e.id ? "#" + e.id : "") + "." + e.className + " " + Math.round(e.getBoundingClientRect().right));
			return {ScrollW: document.documentElement.scrollWidth, InnerW: innerWidth, Rows: names.length, Wide: wide,
				Cut: names.filter((td) => td.scrollWidth > td.clientWidth + 1).length}; })()`))
		if phone.ScrollW > phone.InnerW || phone.Cut != 0 {
			t.Errorf("#%s at 390×844: page %d px wide in a %d px window (widest: %v), %d of %d names cut", v.hash, phone.ScrollW, phone.InnerW, phone.Wide, phone.Cut, phone.Rows)
		}
		if v.shot != "" {
			docShot(t, v.shot, get(t, bctx, chromedp.CaptureScreenshot()))
		}
	}
	do(t, bctx, chromedp.EmulateViewport(1280, 800))

	// Locks: an armed force-release stays armed through three refreshes,
	// then the second click frees the lock.
	open(t, bctx, srv.URL+"/#locks", "locks")
	btn := `tr[data-lock="payments"] button`
	do(t, bctx, click(btn))
	refreshes(t, bctx, 3)
	armed := get(t, bctx, chromedp.Evaluate[struct{ Text, Cls string }](`(() => { const b = document.querySelector('tr[data-lock="payments"] button'); return {Text: b.textContent, Cls: b.className}; })()`))
	if armed.Text != "confirm force release?" || !strings.Contains(armed.Cls, "confirm") {
		t.Errorf("after three refreshes the armed button reads %+v", armed)
	}
	do(t, bctx, click(btn), chromedp.WaitVisible(chromedp.CSS("#notice-text")))
	if info, err := rp.Inspect(ctx, "payments"); err != nil || info.Held {
		t.Errorf("after the second click: %+v %v (lease token %d)", info, err, lease.Token)
	}

	// A run whose lock an operator force-released (here with the CLI's
	// name) says so on its row of the job page: the backend's record.
	stuck, err := rp.AcquireRun(ctx, lockprovider.AcquireParams{Name: "manual-report", Owner: lockprovider.NewOwner(), AtMostFor: 5 * time.Minute, LockedBy: "replica-9"}, lockprovider.RunStart{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rp.ForceRelease(ctx, lockprovider.ForceReleaseParams{Name: "manual-report", Token: stuck.Token, By: "cli:alice@ops-1"}); err != nil {
		t.Fatal(err)
	}
	open(t, bctx, srv.URL+"/#job/manual-report?backend=redis", "job")
	sel := fmt.Sprintf(`#runs-table tr[data-token="%d"] .released`, stuck.Token)
	if txt := get(t, bctx, redrawn(chromedp.Text(chromedp.CSS(sel)))); !strings.HasPrefix(txt, "lock force-released by cli:alice@ops-1 at ") {
		t.Errorf("the force-released run's row reads %q", txt)
	}
}

// TestBrowserDeadBackend points the page at a Redis and a PostgreSQL that
// do not answer: every view says "unknown", none says "No lock is held"
// or "every key is at full capacity", and "updated" never advances.
func TestBrowserDeadBackend(t *testing.T) {
	// Mostly waiting on leases, stalls and deadlines: run beside the others.
	t.Parallel()
	bctx := browser(t)
	rc := goredis.NewClient(&goredis.Options{Addr: "127.0.0.1:1", MaxRetries: -1, DialTimeout: 200 * time.Millisecond, ContextTimeoutEnabled: true})
	defer rc.Close()
	rp, err := redisprovider.New(rc, nil)
	if err != nil {
		t.Fatal(err)
	}
	pool, err := pgxpool.New(t.Context(), "postgres://postgres@127.0.0.1:1/test?sslmode=disable&connect_timeout=1")
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	pp, err := pgprovider.New(pool, nil)
	if err != nil {
		t.Fatal(err)
	}
	h, err := status.New(&status.Config{Backends: []status.Backend{
		{Name: "redis", Provider: rp, Source: `prefix "baton:" on 127.0.0.1:1`},
		{Name: "postgres", Provider: pp, Source: "127.0.0.1:1"},
	}, Refresh: time.Second, Timeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	for _, v := range []struct{ view, table string }{{"jobs", "jobs-table"}, {"locks", "locks-table"}, {"limits", "limits-table"}} {
		open(t, bctx, srv.URL+"/#"+v.view, v.view)
		refreshes(t, bctx, 2)
		viewShot(t, bctx, "dead-"+v.view)
		got := get(t, bctx, chromedp.Evaluate[struct{ Body, Updated, Unknown string }](`({Body: document.querySelector("#`+v.table+` tbody").textContent,
			Updated: document.getElementById("updated").textContent, Unknown: [...document.querySelectorAll("#`+v.table+` tr.unknown")].map((r) => r.dataset.unknown).join(",")})`))
		for _, bad := range []string{"No lock is held", "full capacity", "No scheduler instance"} {
			if strings.Contains(got.Body, bad) {
				t.Errorf("%s view of dead backends says %q: %q", v.view, bad, got.Body)
			}
		}
		const want = "redis,postgres"
		if got.Unknown != want || !strings.Contains(got.Body, "unknown") || !strings.HasPrefix(got.Updated, "read failed at ") || !strings.Contains(got.Updated, "never complete") {
			t.Errorf("%s view of dead backends: unknown rows %q (want %s), updated %q, body %q", v.view, got.Unknown, want, got.Updated, got.Body)
		}
	}
}

// TestBrowserTwentyJobs draws 20 jobs of three replicas over 25 hours at
// 1,400 × 900: all 20 fit the window, and beyond 24 hours the axis labels
// carry their dates. The timeline screenshot of the README is this one.
func TestBrowserTwentyJobs(t *testing.T) {
	bctx := browser(t)
	p, err := synth.Week(20, 5*time.Minute, 25*time.Hour, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	h, err := status.New(&status.Config{Backends: []status.Backend{{Name: "redis", Provider: p}}})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	do(t, bctx, chromedp.EmulateViewport(1400, 900))
	open(t, bctx, srv.URL+"/#timeline?range=90000000", "timeline")
	got := get(t, bctx, chromedp.Evaluate[struct {
		Jobs, Below int
		Labels      []string
	}](`(() => { const gs = [...document.querySelectorAll("#timeline g.job")];
		return {Jobs: gs.length, Below: gs.filter((g) => g.getBoundingClientRect().bottom > innerHeight).length,
			Labels: [...document.querySelectorAll("#timeline text.axis")].map((x) => x.textContent)}; })()`))
	dated := 0
	for _, l := range got.Labels {
		if len(l) >= 5 && l[2] == '-' { // "MM-DD ..."
			dated++
		}
	}
	if got.Jobs != 20 || got.Below != 0 || dated != len(got.Labels) || dated == 0 {
		t.Errorf("20 jobs over 25 h at 1400×900: %d drawn, %d below the window; axis labels %q, want each with its date", got.Jobs, got.Below, got.Labels)
	}
	docShot(t, "status-timeline.png", get(t, bctx, chromedp.CaptureScreenshot()))
}
