package shedlock

import (
	"fmt"
	"regexp"
	"strconv"
	"time"

	"github.com/baton-go/baton/batontype"
)

// TimeMode says which clock and which time zone the Java fleet's
// JdbcTemplateLockProvider (or JdbcLockProvider) writes lock_until and
// locked_at with. It must match the Java configuration exactly: a Go
// replica that reads the Java times in the wrong zone sees their locks
// expire hours early (a job runs twice) or late (it runs nowhere). There
// is therefore no default: the zero value is refused.
type TimeMode int

const (
	// DBTime is ShedLock's usingDbTime(): times come from the database
	// clock and are stored as UTC wall-clock times.
	DBTime TimeMode = iota + 1
	// ClientTimeUTC is JVM time with forceUtcTimeZone(): the JVM clock,
	// stored as UTC wall-clock times.
	ClientTimeUTC
	// ClientTimeZone is JVM time without forceUtcTimeZone(): the JVM clock,
	// stored as wall-clock times of the JVM's default time zone, which
	// PostgresConfig.JavaZone must name.
	ClientTimeZone
)

func (m TimeMode) String() string {
	switch m {
	case DBTime:
		return "DBTime"
	case ClientTimeUTC:
		return "ClientTimeUTC"
	case ClientTimeZone:
		return "ClientTimeZone"
	}
	return "TimeMode(" + strconv.Itoa(int(m)) + ")"
}

// ColumnType is the SQL type of ShedLock's lock_until and locked_at columns.
type ColumnType int

const (
	// DetectColumns (the zero value) reads the type from the catalog in
	// Migrate or Check.
	DetectColumns ColumnType = iota
	// Timestamp is "timestamp without time zone", the type ShedLock's
	// documentation gives for PostgreSQL.
	Timestamp
	// Timestamptz is "timestamp with time zone".
	Timestamptz
)

func (c ColumnType) String() string {
	switch c {
	case DetectColumns:
		return "DetectColumns"
	case Timestamp:
		return "timestamp"
	case Timestamptz:
		return "timestamptz"
	}
	return "ColumnType(" + strconv.Itoa(int(c)) + ")"
}

// ErrTimeMode is matched (errors.Is) by every refusal of a time
// configuration that could make a Go replica misread the Java replicas'
// times. It matches batontype.ErrInvalid too.
var ErrTimeMode = fmt.Errorf("%w: ShedLock time mode", batontype.ErrInvalid)

// zoneRE is an IANA zone name as both Go and PostgreSQL spell it.
var zoneRE = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_+\-]*(/[A-Za-z0-9_+\-]+)*$`)

// representation is how the table stores an instant: as itself
// (timestamptz holding true instants), or as the wall-clock time of a zone
// (timestamp columns).
type representation struct {
	wallZone string // "" for instants
}

func timeError(field, value, reason string) error {
	return &batontype.ValidationError{Pkg: "shedlock", Field: field, Value: strconv.Quote(value), Reason: reason, Err: ErrTimeMode}
}

// resolveRepresentation decides, from the Java fleet's time mode and the
// column type, how times are stored, or refuses the combination.
func resolveRepresentation(mode TimeMode, zone *time.Location, cols ColumnType) (representation, error) {
	zoneName := ""
	if zone != nil {
		zoneName = zone.String()
		if zone == time.Local || zoneName == "Local" || !zoneRE.MatchString(zoneName) {
			return representation{}, timeError("JavaZone", zoneName,
				"must be a named IANA zone loaded with time.LoadLocation (the JVMs' zone, not this host's)")
		}
	}
	utc := zoneName == "" || isUTC(zone)
	switch mode {
	case DBTime:
		if cols == Timestamptz && zoneName == "" {
			return representation{}, timeError("JavaZone", "",
				"must be set with DBTime on timestamptz columns: ShedLock's UTC wall-clock times are read in the JDBC session's zone (the JVM's), and only UTC is supported")
		}
		if cols == Timestamptz && !utc {
			// ShedLock writes timezone('utc', CURRENT_TIMESTAMP), a UTC
			// wall-clock time, which a timestamptz column reads in the
			// JDBC session's zone (the JVM's): the stored instants are
			// shifted by that zone's offset and jump at its DST changes.
			return representation{}, timeError("JavaZone", zoneName,
				"DBTime on timestamptz columns is supported only when the JVMs run in UTC (their JDBC sessions shift the stored times otherwise); use timestamp columns or run the JVMs with -Duser.timezone=UTC")
		}
		if cols == Timestamptz {
			return representation{}, nil
		}
		return representation{wallZone: "UTC"}, nil
	case ClientTimeUTC:
		if cols == Timestamptz {
			return representation{}, nil
		}
		return representation{wallZone: "UTC"}, nil
	case ClientTimeZone:
		if zoneName == "" {
			return representation{}, timeError("JavaZone", "",
				"must name the JVMs' default time zone with ClientTimeZone (ShedLock stores their local wall-clock time)")
		}
		if cols == Timestamptz {
			// pgjdbc sends the offset with each time: true instants.
			return representation{}, nil
		}
		if utc {
			return representation{wallZone: "UTC"}, nil
		}
		return representation{wallZone: zoneName}, nil
	}
	return representation{}, timeError("TimeMode", mode.String(),
		"must be set to DBTime, ClientTimeUTC or ClientTimeZone, exactly as the Java fleet is configured")
}

// isUTC reports whether loc has offset 0 at all times we care about (now
// and half a year either side).
func isUTC(loc *time.Location) bool {
	now := time.Now()
	for _, t := range []time.Time{now, now.AddDate(0, 6, 0), now.AddDate(0, -6, 0)} {
		if _, off := t.In(loc).Zone(); off != 0 {
			return false
		}
	}
	return true
}

// lit is a PostgreSQL string literal of a validated zone name.
func lit(s string) string { return "'" + s + "'" }

// SQL fragments, used by the templates: wall turns an instant expression
// into the stored form; until is the stored form of base+dur, guarded
// against a DST fall-back inside the interval; inst reads a stored column
// back as an instant, choosing the later instant for an ambiguous local
// time (PostgreSQL reads it as standard time), so a lock never looks free
// early.
func (r representation) wall(instant string) string {
	if r.wallZone == "" {
		return instant
	}
	return "timezone(" + lit(r.wallZone) + ", " + instant + ")"
}

func (r representation) until(base, dur string) string {
	switch r.wallZone {
	case "":
		return "(" + base + " + " + dur + ")"
	case "UTC":
		return "timezone('UTC', " + base + " + " + dur + ")"
	}
	// Wall-clock times repeat an hour when DST ends. A lock that ends
	// after such a fall-back is written as at least the wall time now plus
	// the duration, so that a Java replica comparing wall times never
	// finds it free before its end (it may find it held up to an hour
	// longer, once a year).
	z := lit(r.wallZone)
	return "GREATEST(timezone(" + z + ", " + base + " + " + dur + "), timezone(" + z + ", " + base + ") + " + dur + ")"
}

func (r representation) inst(col string) string {
	if r.wallZone == "" {
		return col
	}
	return "timezone(" + lit(r.wallZone) + ", " + col + ")"
}
