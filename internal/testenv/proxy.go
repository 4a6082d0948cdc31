package testenv

import (
	"testing"

	"github.com/baton-go/baton/lockprovider/lockprovidertest/faultproxy"
)

// The fault proxy lives in lockprovider/lockprovidertest/faultproxy, for
// providers' own tests; these names keep the repository's tests short.
type (
	Proxy = faultproxy.Proxy
	Mode  = faultproxy.Mode
)

// The proxy's modes.
const (
	Pass        = faultproxy.Pass
	Blackhole   = faultproxy.Blackhole
	DropReplies = faultproxy.DropReplies
	Reset       = faultproxy.Reset
)

// NewProxy is faultproxy.New.
func NewProxy(t testing.TB, target string) *Proxy { return faultproxy.New(t, target) }

// ProxyURL is faultproxy.URL.
func ProxyURL(t testing.TB, rawURL string) (*Proxy, string) { return faultproxy.URL(t, rawURL) }
