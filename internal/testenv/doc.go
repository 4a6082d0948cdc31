// Package testenv gives tests real Redis, PostgreSQL and MySQL/MariaDB
// servers.
//
// Each backend is resolved once per test binary, in this order:
//
//  1. TEST_REDIS_URL / TEST_DATABASE_URL / TEST_MYSQL_DSN;
//  2. a private server started from the local redis-server, PostgreSQL or
//     MariaDB (mariadbd, mariadb-install-db) binaries on a free loopback
//     port (PostgreSQL as the postgres user when running as root);
//  3. otherwise the test fails, saying how to provide one. Nothing is
//     skipped silently. Contributors with Docker but without the binaries
//     run `make test-docker`, which starts containers and sets the two
//     variables (the testservers module, kept apart so that no user of the
//     library downloads testcontainers-go).
//
// testenv links no client library: it speaks the little RESP it needs,
// asks pg_isready whether PostgreSQL is up, and takes MariaDB's open port
// for readiness (the server listens only once it accepts connections).
// Clients live in redisenv (go-redis), pgenv (pgx) and mysqlenv
// (go-sql-driver/mysql), so a test links only the driver it uses.
//
// Tests isolate themselves with a key prefix (Redis), a schema
// (PostgreSQL) or a database (MySQL) of their own, so they can run in
// parallel. Fault tests start servers of their own with StartRedis,
// StartPostgres and StartMySQL, which they may
// stop, kill, pause and restart, and put a Proxy between a client and a
// server to blackhole the connection, drop replies, delay each chunk or
// reset connections while the test runs. StartEtcdCluster starts a private
// etcd cluster (from the etcd binary; Debian's etcd-server package) whose
// members, the leader among them, can be killed and restarted.
//
// Main wraps a package's TestMain: it runs the tests, stops the shared
// servers and checks for leaked goroutines.
package testenv
