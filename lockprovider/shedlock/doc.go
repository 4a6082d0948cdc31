// Package shedlock lets Go replicas take part in the locking of a running
// ShedLock fleet, on ShedLock's own PostgreSQL or MySQL table and Redis
// keys, so that scheduled jobs can move from Java to Go one replica at a
// time without a tick that runs twice or nowhere.
//
// NewPostgres returns a lockprovider.Provider on the table of ShedLock's
// JDBC providers (name, lock_until, locked_at, locked_by) and NewRedis one
// on the keys of its Redis providers ("job-lock:<env>:<name>", value
// "ADDED:<time>@<host>:<id>"). NewMySQL is the JDBC table on MySQL 8 or
// MariaDB, through a database/sql handle: the package names no MySQL
// driver (see MySQL for its time rules). All three acquire, release and
// expire exactly as ShedLock does, so a Java replica and a Go replica
// exclude each other on the same lock name:
//
//   - acquire: insert the row (set the key) if absent, else take it over
//     only when its lock_until has passed (the key expired);
//   - release: lock_until becomes the later of now and grant +
//     lockAtLeastFor (the key is kept until then, or deleted);
//   - expiry: lockAtMostFor after the grant.
//
// What ShedLock lacks is kept beside its data, where it never looks:
// columns owner, at_least_until, fence and last_tick, added by
// Postgres.Migrate; and a hash in the same Redis Cluster slot as the key.
// They give Go replicas an owner token per grant (a stale Go replica can
// never release or extend another holder's lock, Java's or Go's), fencing
// tokens that only increase, and the scheduler's tick identity. Java grants
// carry no token; a tick is not granted to a Go replica when anyone, Java
// included, was granted the lock at or after the tick's time (on Redis: a
// Java grant that some Go replica found while it was held).
//
// Java replicas that use JVM time store wall-clock times of some zone, and
// reading them in another zone makes locks look free hours early. The time
// configuration of the Java fleet (PostgresConfig.TimeMode and JavaZone)
// therefore has no default, and combinations that cannot be read back
// safely are refused with ErrTimeMode. Go replicas always take the time
// from the database server, so JVM clocks must agree with it within
// lockAtLeastFor, which is ShedLock's own rule between JVMs.
//
// Every operation is one SQL statement or one script call, except in the
// MySQL mode, where Extend, and Acquire on MySQL (not MariaDB), read the
// row back in a second statement (see MySQL). ParseDuration
// and SchedulerLock read ShedLock's lockAtMostFor and lockAtLeastFor
// strings, so a Go job can be configured from the same properties as the
// Java job it replaces: a parsed SchedulerLock (a Lock) is what
// scheduler.Bounds consumes, so this package imports neither the scheduler
// nor another provider. Postgres.ExportTokens prepares the final switch to
// baton's native table (package lockprovider/postgres).
package shedlock
