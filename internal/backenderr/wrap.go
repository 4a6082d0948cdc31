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

// Wrapper returns Wrap for one provider: pkg and its driver's classify
// fixed.
func Wrapper(pkg string, classify func(error) (unavailable, notSent bool)) func(op, name string, err error) error {
	return func(op, name string, err error) error { return Wrap(pkg, op, name, err, classify) }
}

// AcquireWrapper returns the wrapping of a failed acquire of name: the
// refusal that contended (the driver's) finds in err, when another session
// was in the way and the statement changed nothing; else wrap("acquire",
// name, err).
func AcquireWrapper(wrap func(op, name string, err error) error, contended func(error) error) func(name string, err error) error {
	return func(name string, err error) error {
		if refused := contended(err); refused != nil {
			return refused
		}
		return wrap("acquire", name, err)
	}
}
