package testenv

import (
	"os"
	"strconv"
	"testing"
)

// Seeds returns the seeds a seeded test runs: 1 to n, or only the one in
// the SEED environment variable, to replay a failure.
func Seeds(t testing.TB, n int) []int64 {
	t.Helper()
	if s := os.Getenv("SEED"); s != "" {
		v, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			t.Fatalf("SEED=%q: %v", s, err)
		}
		return []int64{v}
	}
	out := make([]int64, n)
	for i := range out {
		out[i] = int64(i + 1)
	}
	return out
}
