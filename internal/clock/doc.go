// Package clock holds the one context-aware sleep of the providers' retry
// and polling loops.
package clock
