// Package browsertest drives the status page in headless Chromium against
// real Redis and PostgreSQL. It is its own module so that the browser
// driver (chromedp) stays out of the library's go.mod. It needs Debian's
// chromium (or BATON_CHROMIUM naming a Chrome binary) and fails, not
// skips, without it.
//
//	go test ./...                              the browser tests
//	go test -run 'Operator|TwentyJobs' -docshots   also rewrites the README's screenshots in docs/
//	go test -run 'Browser$' -views DIR         also saves every view's screenshot in DIR
//	go test -run '^$' -bench Week -benchtime 3x   100 jobs × 1 week of 1-minute ticks
package browsertest
