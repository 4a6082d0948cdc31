package backenderr

import (
	"fmt"

	"github.com/baton-go/baton/batontype"
)

// Wrap wraps the error of a provider's call once, as "pkg: op "name": err"
// (without the name when it is empty). When classify (the driver's, such
// as pgerr.Classify) says the server could not be reached or did not
// answer in time, the result is a *batontype.UnavailableError, with
// NotSent as classify tells; never a refusal.
func Wrap(pkg, op, name string, err error, classify func(error) (unavailable, notSent bool)) error {
	var wrapped error
	if name == "" {
		wrapped = fmt.Errorf("%s: %s: %w", pkg, op, err)
	} else {
		wrapped = fmt.Errorf("%s: %s %q: %w", pkg, op, name, err)
	}
	if unavailable, notSent := classify(err); unavailable {
		return &batontype.UnavailableError{NotSent: notSent, Err: wrapped}
	}
	return wrapped
}
