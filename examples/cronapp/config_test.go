package main

import (
	"io"
	"strings"
	"testing"
	"time"
)

func TestConfig(t *testing.T) {
	env := map[string]string{"REDIS_URL": "redis://r:1/2", "REPLICA": "a", "CRONAPP_DEMO": "true", "CRONAPP_PAUSE_AFTER": "5s"}
	c, err := parseConfig([]string{"-replica", "b", "-run-id", "x1"}, func(k string) string { return env[k] }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if c.RedisURL != "redis://r:1/2" || c.DatabaseURL != defaultDatabaseURL || c.Replica != "b" || !c.Demo || c.PauseAfter != 5*time.Second {
		t.Errorf("config %+v", c)
	}
	if c.Locks != "redis" {
		t.Errorf("locks %q by default, want redis", c.Locks)
	}
	if c.schema() != "cronapp_x1" || c.prefix() != "cronapp:x1:" || c.mysqlTable() != "cronapp_x1" {
		t.Errorf("schema %q prefix %q", c.schema(), c.prefix())
	}

	for _, tc := range []struct {
		args []string
		env  map[string]string
		want string
	}{
		{[]string{"-run-id", "Bad-ID"}, nil, "run id"},
		{[]string{"-log-format", "xml"}, nil, "log format"},
		{[]string{"-pause-after", "1s"}, nil, "demo feature"},
		{[]string{"-duration", "-1s"}, nil, "durations"},
		{nil, map[string]string{"CRONAPP_DURATION": "soon"}, "CRONAPP_DURATION"},
		{[]string{"extra"}, nil, "unexpected arguments"},
		{[]string{"-locks", "etcd"}, nil, "want redis or mysql"},
		{[]string{"-locks", "mysql"}, nil, "needs -mysql"},
	} {
		_, err := parseConfig(tc.args, func(k string) string { return tc.env[k] }, io.Discard)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v %v: err %v, want it to mention %q", tc.args, tc.env, err, tc.want)
		}
	}
}
