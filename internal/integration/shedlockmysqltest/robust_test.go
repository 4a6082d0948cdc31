package shedlockmysqltest

import (
	"context"
	"testing"
	"time"

	"github.com/baton-go/baton/internal/robust"
	"github.com/baton-go/baton/internal/testenv"
	"github.com/baton-go/baton/internal/testenv/mysqlenv"
	"github.com/baton-go/baton/lockprovider/lockprovidertest/faultproxy"
	"github.com/baton-go/baton/lockprovider/lockprovidertest/history"
	"github.com/baton-go/baton/lockprovider/shedlock"
)

// The ShedLock MySQL mode (database time) in the robustness run (see
// internal/robust): a private MariaDB behind a fault proxy, not killed
// (see TestRobustMariaDB in internal/integration/robusttest).
func TestRobustShedLockMySQL(t *testing.T) {
	robust.Enabled(t)
	s := testenv.StartMySQL(t)
	px := faultproxy.New(t, s.Addr())
	name := "robust_" + testenv.Unique()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	if _, err := mysqlenv.Open(t, s.DSN()).ExecContext(ctx, "CREATE DATABASE "+name); err != nil {
		t.Fatal(err)
	}
	db := mysqlenv.Open(t, withZone(mysqlenv.WithDatabase(t, "root@tcp("+px.Addr()+")/", name), "+00:00"))
	p, err := shedlock.NewMySQL(db, &shedlock.MySQLConfig{TimeMode: shedlock.DBTime})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	robust.Run(t, robust.Target{Name: "shedlock-mysql", Proxies: []*faultproxy.Proxy{px}, Provider: p, ResetOnce: true,
		Config: history.Config{TickAfterGrant: true}})
}
