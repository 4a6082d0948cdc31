// Package defaults is the one way the providers' constructors turn a
// Config field into the value in use: the zero value means the documented
// default, any other value is checked against its bounds, and a value out
// of bounds is a *batontype.ValidationError naming the field. Bounds
// that several providers share (the run-record TTL) are stated here once.
// The package imports no driver.
package defaults
