// Command baton inspects and operates the state that baton keeps in Redis,
// PostgreSQL and MySQL/MariaDB: locks, scheduled jobs (registry and run ledger) and rate
// limits.
//
// Install it with
//
//	go install github.com/baton-go/baton/cmd/baton@latest
//
// and point it at backends with --redis URL, --postgres URL and --mysql DSN
// (or BATON_REDIS_URL, BATON_POSTGRES_URL and BATON_MYSQL_URL). --mysql
// takes the driver's DSN (USER:PASSWORD@tcp(HOST:3306)/DB) or a
// mysql://USER:PASSWORD@HOST:3306/DB URL, and must name the database that
// holds baton's tables. With several backends, every command shows them
// all, each row naming its backend.
//
//	baton locks ls                      who holds which lock, with token and expiry
//	baton locks get NAME
//	baton locks release --force NAME    free a stuck lock (shows holder and token, asks)
//	baton jobs ls                       schedules, state (paused, missed, failed, ok...), next tick, last run, replicas
//	baton jobs runs JOB [--since 24h] [--outcome failed,unfinished]   the run ledger of a job
//	baton jobs check [--grace 1m]       dead-man's switch: exit 1 on a missed or failed tick
//	baton jobs skips [JOB...]           ticks each replica did not run, by reason (held, still running, paused...), with the latest
//	baton jobs run JOB [--wait]         run a job now, once, on one live replica that has it
//	baton jobs pause JOB                pause a job on every replica of the backends that know it (jobs resume JOB undoes it)
//	baton replicas ls                   scheduler replicas: alive, late, gone (died: what it was running) or left
//	baton limits ls [--limit gcra:100/1m [--near]]   rate-limit keys with live state; near or over the limit
//	baton limits get KEY [--limit gcra:100/1m]
//	baton limits reset KEY
//	baton serve [--addr 127.0.0.1:8080] [--actions]   the status page (package status)
//
// locks release --force records who released the lock, in the backend, on
// the run the freed lease belongs to (if a job's run holds it): as
// "cli:$USER@HOST", $USER or else the process's account, HOST the
// machine's name. jobs runs, the status page's job page and the ledger
// then show "force-released by cli:alice@ops-1 at T" on that run (-o json:
// released_by, released_at); a release from the status page reads
// "page:" and the request's remote address. jobs run and the page's
// run-now name their requester in the same two forms.
//
// Every command takes -o table (default) or -o json; tables fit about 120
// columns unless --wide (whole errors, absolute times, replica names), and
// JSON gives each duration also in milliseconds ("at_most_for_ms"). With
// several backends, a backend that fails prints its own error line (with
// what to do: run Migrate, check --pg-schema or the DSN's database, the
// role, user, password or database) and
// the others still print their rows; the exit code is then 4.
//
// Exit codes: 0 success; 1 jobs check found a missed, failed or unfinished
// tick, or no scheduler instance is alive, or jobs run --wait saw no
// replica claim the request; 2 bad usage or input; 3 the lock or
// rate-limit key was not found, no lease is in force, (jobs run, jobs
// check JOB) no live scheduler has the job, or (jobs runs) neither the
// registry nor the ledger knows the job; 4 a backend could not be reached
// or failed; 5 the operator did not confirm.
package main
