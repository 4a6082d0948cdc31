package lockprovider_test

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Packages depend downward only: a provider implements this contract and
// imports neither the packages that consume it (baton, scheduler, leader,
// ratelimit, fence, status, observe) nor another provider. Checked with
// go list on the providers of this module and of the etcd module.
func TestProvidersImportNoConsumerNorProvider(t *testing.T) {
	const mod = "github.com/baton-go/baton"
	providers := []string{"memory", "redis", "postgres", "mysql", "redlock", "shedlock"}
	check := func(dir, pkg string) {
		t.Helper()
		out, err := exec.Command("go", "list", "-f", `{{join .Imports "\n"}}`, pkg).CombinedOutput()
		if err != nil {
			t.Fatalf("go list %s (in %s): %v\n%s", pkg, dir, err, out)
		}
		self := strings.TrimPrefix(pkg, "./")
		for _, imp := range strings.Fields(string(out)) {
			if !strings.HasPrefix(imp, mod) {
				continue
			}
			rel := strings.TrimPrefix(strings.TrimPrefix(imp, mod), "/")
			switch {
			case rel == "lockprovider", rel == "batontype", strings.HasPrefix(rel, "internal/"):
			case strings.HasPrefix(rel, "lockprovider/") && !strings.HasPrefix(rel, "lockprovider/"+self):
				t.Errorf("provider %s imports another provider: %s", self, imp)
			case strings.HasPrefix(rel, "lockprovider/"):
			default:
				t.Errorf("provider %s imports a consumer of the contract: %s", self, imp)
			}
		}
	}
	for _, p := range providers {
		check(".", "./"+p)
	}
	etcd, err := filepath.Abs("etcd")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("go", "list", "-f", `{{join .Imports "\n"}}`, ".")
	cmd.Dir = etcd
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go list in %s: %v\n%s", etcd, err, out)
	}
	for _, imp := range strings.Fields(string(out)) {
		rel, ok := strings.CutPrefix(imp, mod+"/")
		if !ok || rel == "lockprovider" || rel == "batontype" || strings.HasPrefix(rel, "internal/") || strings.HasPrefix(rel, "lockprovider/etcd") {
			continue
		}
		t.Errorf("provider etcd imports %s", imp)
	}
}
