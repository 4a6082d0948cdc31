package testenv

import (
	"context"
	"testing"
	"time"
)

// The harness finds the leader, and after the leader is killed the other
// two members elect a new one; the killed member comes back with Restart.
func TestEtcdCluster(t *testing.T) {
	c := StartEtcdCluster(t, 3)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	old, err := c.KillLeader(ctx)
	if err != nil {
		t.Fatalf("KillLeader: %v", err)
	}
	if c.Members[old].Running() {
		t.Fatalf("member %s still running after KillLeader", c.Members[old].Name)
	}
	next, err := c.WaitLeader(ctx)
	if err != nil {
		t.Fatalf("no new leader after killing %s: %v", c.Members[old].Name, err)
	}
	if next == old {
		t.Fatalf("leader %d is the killed member", next)
	}
	if err := c.Members[old].Restart(); err != nil {
		t.Fatalf("Restart: %v", err)
	}
	if !c.Members[old].Running() {
		t.Fatal("restarted member not running")
	}
	if len(c.Endpoints()) != 3 {
		t.Errorf("Endpoints() = %v, want 3", c.Endpoints())
	}
}
