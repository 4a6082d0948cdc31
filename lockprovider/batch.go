package lockprovider

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"strconv"

	"github.com/baton-go/baton/batontype"
)

// MaxBatch bounds the items of one AcquireBatch, AcquireRunBatch or
// ReleaseBatch call.
// A provider answers a batch in one round trip (one script call, one
// statement; on a sharded backend one pipeline), and that one call holds
// the backend for the whole batch, so a larger set of claims is split
// by the caller (the scheduler splits at MaxBatch).
const MaxBatch = 1000

// BatchAcquirer is implemented by providers that can grant many names in
// one round trip, for the scheduler's claims of many jobs due at the same
// instant.
type BatchAcquirer interface {
	// AcquireBatch is Provider.Acquire for each of ps, in as few round
	// trips as the backend allows. Result i answers ps[i] exactly as
	// Acquire(ctx, ps[i]) would have at some instant during the call:
	// a lease, batontype.ErrNotAcquired, batontype.ErrStaleTick, a *batontype.ValidationError for that
	// item alone (the others still proceed), or an error of unknown or
	// unavailable outcome, which a failed round trip gives every item it
	// carried. A name that appears more than once gets, at every
	// occurrence after the first, a *batontype.ValidationError matching batontype.ErrInvalid
	// and is not attempted again. The items are not atomic together:
	// each name is granted or refused on its own.
	//
	// It returns a *batontype.ValidationError, and attempts nothing, when ps holds
	// more than MaxBatch items; an empty ps returns no results.
	AcquireBatch(ctx context.Context, ps []AcquireParams) ([]BatchResult, error)
}

// BatchLedger is implemented by providers that can open the run records
// of many claims in the same round trip as the claims: AcquireBatch as
// Ledger.AcquireRun is Acquire.
type BatchLedger interface {
	// AcquireRunBatch is BatchAcquirer.AcquireBatch; each new grant
	// also records a started run as Ledger.AcquireRun does, with run's
	// flags and retention for every item. An invalid run is a
	// *batontype.ValidationError for the call, and nothing is attempted.
	AcquireRunBatch(ctx context.Context, ps []AcquireParams, run RunStart) ([]BatchResult, error)
	// ReleaseRunBatch is BatchReleaser.ReleaseBatch; each item also
	// records its run's end, ends[i], as Ledger.ReleaseRun does
	// (whatever the release answered: a lost lease still gets its
	// outcome). An invalid ends[i] is that item's *batontype.ValidationError, and
	// the item is not attempted. It returns a *batontype.ValidationError, and
	// attempts nothing, when ends and ps differ in length or ps holds
	// more than MaxBatch items.
	ReleaseRunBatch(ctx context.Context, ps []ReleaseParams, ends []RunEnd) ([]error, error)
}

// BatchReleaser is implemented by providers that can release many leases
// in one round trip, for the scheduler's releases of many runs that end
// together (the jobs of one tick): one call instead of one round trip
// each saves the backend and the client most of the work.
type BatchReleaser interface {
	// ReleaseBatch is Provider.Release for each of ps, in as few round
	// trips as the backend allows. Error i answers ps[i] exactly as
	// Release(ctx, ps[i]) would have at some instant during the call:
	// nil, batontype.ErrNotHeld, a *batontype.ValidationError for that item alone (the
	// others still proceed), or an error of unknown or unavailable
	// outcome, which a failed round trip gives every item it carried. A
	// released lease is announced to waiters as Release announces it. A
	// name that appears more than once gets, at every occurrence after
	// the first, a *batontype.ValidationError matching batontype.ErrInvalid and is not
	// attempted again.
	//
	// It returns a *batontype.ValidationError, and attempts nothing, when ps holds
	// more than MaxBatch items; an empty ps returns no results.
	ReleaseBatch(ctx context.Context, ps []ReleaseParams) ([]error, error)
}

// BatchResult answers one item of a batch: a Lease, or Err.
type BatchResult struct {
	Lease batontype.Lease
	Err   error
}

// ValidateBatch checks the size of a batch and each of its items, and
// returns the items' errors (nil for a valid item, and a
// *batontype.ValidationError for the repeats of a name), for providers to skip
// the invalid ones. err is non-nil when the batch itself is too large.
func ValidateBatch(ps []AcquireParams) (itemErrs []error, err error) {
	return validateBatch(ps, func(p AcquireParams) string { return p.Name })
}

// ValidateReleaseBatch is ValidateBatch for ReleaseBatch.
func ValidateReleaseBatch(ps []ReleaseParams) (itemErrs []error, err error) {
	return validateBatch(ps, func(p ReleaseParams) string { return p.Name })
}

// ValidateReleaseRunBatch is ValidateReleaseBatch for ReleaseRunBatch:
// ends must hold one RunEnd per release, and an invalid end is its
// item's error.
func ValidateReleaseRunBatch(ps []ReleaseParams, ends []RunEnd) (itemErrs []error, err error) {
	if len(ends) != len(ps) {
		return nil, batontype.Invalid("ends", strconv.Itoa(len(ends))+" items", "must hold one RunEnd per release ("+strconv.Itoa(len(ps))+")", batontype.ErrInvalid)
	}
	if itemErrs, err = ValidateReleaseBatch(ps); err != nil {
		return nil, err
	}
	for i := range ends {
		if itemErrs[i] == nil {
			itemErrs[i] = ends[i].Validate()
		}
	}
	return itemErrs, nil
}

func validateBatch[P interface{ Validate() error }](ps []P, name func(P) string) (itemErrs []error, err error) {
	if len(ps) > MaxBatch {
		return nil, batontype.Invalid("batch", strconv.Itoa(len(ps))+" items", "holds more than MaxBatch ("+strconv.Itoa(MaxBatch)+") items", batontype.ErrInvalid)
	}
	itemErrs = make([]error, len(ps))
	seen := make(map[string]struct{}, len(ps))
	for i, p := range ps {
		if e := p.Validate(); e != nil {
			itemErrs[i] = e
			continue
		}
		n := name(p)
		if _, dup := seen[n]; dup {
			itemErrs[i] = batontype.Invalid("Name", n, "appears earlier in the same batch", batontype.ErrInvalid)
			continue
		}
		seen[n] = struct{}{}
	}
	return itemErrs, nil
}

// NewOwners returns n fresh owner tokens, each as NewOwner's (128 random
// bits, hex-encoded), from one read of the system's random source, for
// the items of a batch.
func NewOwners(n int) []string {
	b := make([]byte, 16*n)
	_, _ = rand.Read(b) // never fails since Go 1.24; see NewOwner
	out := make([]string, n)
	for i := range out {
		out[i] = hex.EncodeToString(b[16*i : 16*i+16])
	}
	return out
}
