// Package isnil tells a nil interface value from one holding a typed nil
// (a nil *memory.Provider in a lockprovider.RateLimiter, say), which
// compares unequal to nil and panics on first use, far from the mistake.
package isnil

import "reflect"

// IsNil reports whether v is nil or holds a nil pointer, map, slice,
// func, channel or interface.
func IsNil(v any) bool {
	if v == nil {
		return true
	}
	switch r := reflect.ValueOf(v); r.Kind() {
	case reflect.Pointer, reflect.Map, reflect.Slice, reflect.Func, reflect.Chan, reflect.Interface:
		return r.IsNil()
	}
	return false
}
