package batontype_test

import (
	"errors"
	"fmt"
	"strings"

	"github.com/baton-go/baton/batontype"
)

// A name is checked once, the same way by every package and provider; the
// error says which input was wrong and matches ErrInvalid.
func ExampleValidateName() {
	err := batontype.ValidateName("daily\nreport")
	fmt.Println(err)
	fmt.Println(errors.Is(err, batontype.ErrInvalid), errors.Is(err, batontype.ErrInvalidName))
	// Output:
	// baton: invalid Name "daily\nreport": contains control character U+000A
	// true true
}

// A ValidationError names the package that rejected the input when Pkg is
// set.
func ExampleValidationError() {
	err := &batontype.ValidationError{Pkg: "scheduler", Job: "nightly", Field: "AtLeastFor", Value: `"2h0m0s"`, Reason: "must not exceed AtMostFor 1h0m0s", Err: batontype.ErrInvalidDuration}
	fmt.Println(err)
	// Output:
	// scheduler: invalid AtLeastFor of job "nightly" "2h0m0s": must not exceed AtMostFor 1h0m0s
}

func ExampleCutError() {
	long := strings.Repeat("é", batontype.MaxRunError)
	cut := batontype.CutError("line1\x00" + long)
	fmt.Println(len(cut) <= batontype.MaxRunError, strings.HasPrefix(cut, "line1 "), strings.HasSuffix(cut, "…"))
	// Output:
	// true true true
}

func ExampleDefinite() {
	fmt.Println(batontype.Definite(batontype.ErrNotAcquired))
	fmt.Println(batontype.Definite(&batontype.UnavailableError{NotSent: true, Err: errors.New("dial refused")}))
	fmt.Println(batontype.Definite(&batontype.UnavailableError{Err: errors.New("i/o timeout")}))
	// Output:
	// true
	// true
	// false
}
