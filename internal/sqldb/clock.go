package sqldb

import "strconv"

// RowNow is the SQL for UTC "now", to fsp fractional digits, at the moment
// a row is checked, where UTC_TIMESTAMP(fsp) is the statement's start.
// Why: a statement that waited for a row lock checks the row as the other
// transaction left it, and against its start a lease that transaction ended
// a moment later still looks live (an Extend revives it, a Release reports
// it held). SYSDATE(fsp) is the session's local time when evaluated; the
// session zone's offset, read at the statement's start from NOW and
// UTC_TIMESTAMP, turns it into UTC. GREATEST keeps it no earlier than the
// statement's start should the offset change in between (a daylight-saving
// change mid-statement) or SYSDATE mean NOW (the server's
// --sysdate-is-now), which is the statement-start check again.
func RowNow(fsp int) string {
	f := strconv.Itoa(fsp)
	return "GREATEST(UTC_TIMESTAMP(" + f + "), SYSDATE(" + f + ") - INTERVAL TIMESTAMPDIFF(MICROSECOND, UTC_TIMESTAMP(" + f + "), NOW(" + f + ")) MICROSECOND)"
}
