package browsertest

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/baton-go/baton/lockprovider"
	"github.com/baton-go/baton/lockprovider/memory"
	"github.com/baton-go/baton/status"
)

// DNS rebinding in a real browser: Chromium resolves rebind.example to the
// page's loopback address, as a hostile name's DNS would after the page
// loaded. Loaded under that name, the page, its API and its actions are
// refused (403), though the browser calls every request same-origin and
// actions are on; the lock stays held.
func TestBrowserRebinding(t *testing.T) {
	bctx := browser(t, chromedp.Flag("host-resolver-rules", "MAP rebind.example 127.0.0.1"))
	p, err := memory.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	l, err := p.Acquire(context.Background(), lockprovider.AcquireParams{Name: "payments", Owner: lockprovider.NewOwner(), AtMostFor: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	h, err := status.New(&status.Config{Backends: []status.Backend{{Name: "memory", Provider: p}}, Actions: true})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	u, err := url.Parse(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	do(t, bctx, chromedp.Navigate("http://rebind.example:"+u.Port()+"/"), chromedp.WaitReady(chromedp.CSS("body")))
	body := get(t, bctx, chromedp.Text(chromedp.CSS("body")))
	if !strings.Contains(body, "is not allowed") {
		t.Errorf("the page under the rebound name: %q, want the refusal", body)
	}
	type answer struct{ Status int }
	read := get(t, bctx, chromedp.Evaluate[answer](`fetch("/api/locks").then((r) => ({Status: r.status}))`, chromedp.EvalAwaitPromise))
	act := get(t, bctx, chromedp.Evaluate[answer](fmt.Sprintf(`fetch("/api/actions/force-release", {method: "POST", headers: {"Content-Type": "application/json"},
		body: JSON.stringify({backend: "memory", name: "payments", token: %d})}).then((r) => ({Status: r.status}))`, l.Token), chromedp.EvalAwaitPromise))
	if read.Status != http.StatusForbidden || act.Status != http.StatusForbidden {
		t.Errorf("from the rebound name: read %d, force-release %d, want 403 and 403", read.Status, act.Status)
	}
	if info, err := p.Inspect(context.Background(), "payments"); err != nil || !info.Held || info.Token != l.Token {
		t.Errorf("after the rebound page's force-release: %+v %v, want still held", info, err)
	}
}
