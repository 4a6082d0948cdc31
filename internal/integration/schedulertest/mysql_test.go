package schedulertest

import (
	"context"
	"database/sql"
	"testing"

	gomysql "github.com/go-sql-driver/mysql"

	"github.com/baton-go/baton/internal/testenv/mysqlenv"
	"github.com/baton-go/baton/internal/testenv/pgenv"
	"github.com/baton-go/baton/lockprovider"
	myprovider "github.com/baton-go/baton/lockprovider/mysql"
)

func init() {
	setups["mysql"] = func(t *testing.T, _ *pgenv.PG, spec *instanceSpec) {
		my := mysqlenv.Database(t)
		spec.URL = my.DSN
		p, err := myprovider.New(my.DB, nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := p.Migrate(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	providers["mysql"] = func(ctx context.Context, spec instanceSpec, in *instance) (lockprovider.Provider, error) {
		cfg, err := gomysql.ParseDSN(spec.URL)
		if err != nil {
			return nil, err
		}
		cfg.InterpolateParams = true
		c, err := gomysql.NewConnector(cfg)
		if err != nil {
			return nil, err
		}
		db := sql.OpenDB(c)
		db.SetMaxOpenConns(4)
		db.SetMaxIdleConns(4)
		in.closers = append(in.closers, func() { _ = db.Close() })
		if err := db.PingContext(ctx); err != nil {
			return nil, err
		}
		return myprovider.New(db, nil)
	}
}
