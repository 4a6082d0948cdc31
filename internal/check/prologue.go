package check

import (
	"context"
	"encoding/json"
	"time"

	"github.com/baton-go/baton/batontype"
)

// Request is the prologue of Control.RequestRun: ctx and r checked, then
// r as the provider records it (default TTL, fresh ID).
func Request(ctx context.Context, r batontype.RunRequest) (batontype.RunRequest, error) {
	if err := Args(ctx, r.Validate()); err != nil {
		return batontype.RunRequest{}, err
	}
	return r.WithDefaults(), nil
}

// Register is the prologue of Registry.Register: ctx, inst and ttl
// checked, then inst encoded as the providers store it, without the
// fields the backend sets (Heartbeat, Until).
func Register(ctx context.Context, inst batontype.Instance, ttl time.Duration) ([]byte, error) {
	if err := Args(ctx, inst.Validate(ttl)); err != nil {
		return nil, err
	}
	inst.Heartbeat, inst.Until = time.Time{}, time.Time{}
	return json.Marshal(inst)
}
