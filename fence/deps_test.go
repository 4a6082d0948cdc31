package fence_test

import (
	"os/exec"
	"strings"
	"testing"
)

// Each backend package compiles only its own driver, and package fence
// none: a PostgreSQL-only application does not build go-redis, and a
// Redis-only one does not build pgx.
func TestBackendPackagesImportOnlyTheirDriver(t *testing.T) {
	t.Parallel()
	const (
		redisDriver = "github.com/redis/go-redis/"
		pgDriver    = "github.com/jackc/pgx/"
	)
	cases := []struct {
		pkg       string
		forbidden []string
	}{
		{"github.com/baton-go/baton/fence", []string{redisDriver, pgDriver}},
		{"github.com/baton-go/baton/fence/pgfence", []string{redisDriver}},
		{"github.com/baton-go/baton/fence/redisfence", []string{pgDriver}},
	}
	for _, c := range cases {
		out, err := exec.Command("go", "list", "-deps", c.pkg).Output()
		if err != nil {
			t.Fatalf("go list -deps %s: %v", c.pkg, err)
		}
		for _, dep := range strings.Fields(string(out)) {
			for _, f := range c.forbidden {
				if strings.HasPrefix(dep, f) {
					t.Errorf("%s depends on %s", c.pkg, dep)
				}
			}
		}
	}
}
