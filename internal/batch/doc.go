// Package batch is the one frame of the providers' batch methods
// (AcquireBatch, AcquireRunBatch, ReleaseBatch, ReleaseRunBatch): a nil
// context or an invalid batch fails the call, an empty batch returns nil,
// an invalid item gets its own error in its result, and the provider's
// send function, called once, fills in the results of the valid items in
// as few round trips as its backend allows. The package imports no driver.
package batch
