// Package testenv gives tests real Redis and PostgreSQL servers.
//
// Each backend is resolved once per test binary, in this order:
//
//  1. TEST_REDIS_URL / TEST_DATABASE_URL;
//  2. a private server started from the local redis-server or PostgreSQL
//     binaries on a free loopback port (PostgreSQL as the postgres user when
//     running as root);
//  3. otherwise the test fails, saying how to provide one. Nothing is
//     skipped silently. Contributors with Docker but without the binaries
//     run `make test-docker`, which starts containers and sets the two
//     variables (the testservers module, kept apart so that no user of the
//     library downloads testcontainers-go).
//
// testenv links no client library: it speaks the little RESP it needs and
// asks pg_isready whether PostgreSQL is up. Clients live in redisenv
// (go-redis) and pgenv (pgx), so a test links only the driver it uses.
//
// Tests isolate themselves with a key prefix (Redis) or a schema
// (PostgreSQL) of their own, so they can run in parallel. Fault tests start
// servers of their own with StartRedis and StartPostgres, which they may
// stop, kill, pause and restart, and put a Proxy between a client and a
// server to blackhole the connection, drop replies, delay each chunk or
// reset connections while the test runs. StartEtcdCluster starts a private
// etcd cluster (from the etcd binary; Debian's etcd-server package) whose
// members, the leader among them, can be killed and restarted.
//
// Main wraps a package's TestMain: it runs the tests, stops the shared
// servers and checks for leaked goroutines.
package testenv
