package ratelimit_test

import (
	"testing"

	"github.com/baton-go/baton/lockprovider"
	"github.com/baton-go/baton/lockprovider/memory"
)

type storeCase struct {
	name string
	new  func(t testing.TB) lockprovider.RateLimiter
}

var stores = []storeCase{
	{"memory", func(testing.TB) lockprovider.RateLimiter { return memory.New(nil) }},
}
