package memory

// rateState is a placeholder for the rate-limit state of the memory
// provider. The rate-limit work owns this file and replaces it.
type rateState struct{}
