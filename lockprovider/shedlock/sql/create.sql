-- ShedLock's table for PostgreSQL as its documentation gives it, created
-- only when missing (a Java fleet normally has it already), with a name
-- column wide enough for every baton name. {{.Cols}} is the configured
-- column type (timestamp unless Timestamptz was asked for).
CREATE TABLE IF NOT EXISTS {{.Table}} (
    name       VARCHAR(255) NOT NULL PRIMARY KEY,
    lock_until {{.Cols}} NOT NULL,
    locked_at  {{.Cols}} NOT NULL,
    locked_by  VARCHAR(255) NOT NULL
)
