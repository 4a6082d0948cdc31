package main

import (
	"context"
	"math/rand/v2"
	"sync/atomic"
	"time"
)

// thirdPartyAPI stands in for the external API that customer-sync pushes
// to: each push takes a few tens of milliseconds.
type thirdPartyAPI struct {
	calls atomic.Int64
}

func newThirdPartyAPI() *thirdPartyAPI { return &thirdPartyAPI{} }

func (api *thirdPartyAPI) pushCustomerData(ctx context.Context, customer string) error {
	api.calls.Add(1)
	_ = customer
	return sleep(ctx, time.Duration(20+rand.IntN(40))*time.Millisecond)
}
