package batontype

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Instance is one scheduler instance as the job registry knows it.
type Instance struct {
	LockedBy  string    `json:"locked_by"` // unique per instance; the LockedBy of its leases
	Version   string    `json:"version,omitempty"`
	Started   time.Time `json:"started"`   // when the instance started (its own clock)
	Heartbeat time.Time `json:"heartbeat"` // last registration or heartbeat (backend clock)
	Until     time.Time `json:"until"`     // the entry expires then (backend clock)
	Jobs      []JobSpec `json:"jobs"`
}

// Departed is a scheduler instance that is no longer live, as a registry
// that remembers departures keeps it for DepartedRetention: Heartbeat is
// when it was last seen, Until when it departed (its entry lapsed, or it
// deregistered), Jobs what it last registered.
type Departed struct {
	Instance
	// Left is set for an instance that deregistered: a clean shutdown.
	// Otherwise it is gone: its entry lapsed without one (the process was
	// killed, or lost the backend).
	Left bool `json:"left,omitempty"`
}

// DepartedRetention is how long after its departure a registry keeps a
// departed instance (lockprovider.Departures).
const DepartedRetention = time.Hour

// JobSpec is a job as its scheduler registered it.
type JobSpec struct {
	Name string `json:"name"`
	// Schedule is the spec in the scheduler's syntax: a cron spec, or
	// "@every <duration>" optionally followed by " offset <duration>".
	Schedule   string        `json:"schedule"`
	TimeZone   string        `json:"time_zone,omitempty"` // IANA zone of a cron spec
	Locked     bool          `json:"locked"`
	AtMostFor  time.Duration `json:"at_most_for,omitempty"`
	AtLeastFor time.Duration `json:"at_least_for,omitempty"`
	Options    []string      `json:"options,omitempty"` // e.g. "auto_renew", "catch_up", "paused" (Job.Pause on this instance)
	// LastRun is an unlocked job's latest run on this instance (Token 0,
	// no stack), as the instance last published it: the ledger records
	// locked jobs only, so this is an unlocked job's trace. Nil for a
	// locked job, and before the first run.
	LastRun *RunRecord `json:"last_run,omitempty"`
	// Skips counts the job's ticks this instance did not run, as the
	// instance last published it; nil before the first.
	Skips *Skips `json:"skips,omitempty"`
}

// The reasons a scheduler instance did not run a tick of a job (Skip),
// the outcomes of observe.JobSkipped.
const (
	SkipHeld         = "held"          // another holder had the lock
	SkipStaleTick    = "stale_tick"    // the tick had been claimed already: it ran, or runs, elsewhere
	SkipStillRunning = "still_running" // this instance's previous run had not returned
	SkipPaused       = "paused"        // paused on this instance or cluster-wide
	SkipMissed       = "missed"        // ticks passed while the process could not fire them
)

// Skips counts the ticks of one job that one scheduler instance did not
// run, by reason, since the instance started (a missed stretch of ticks
// counts once), and names the latest.
type Skips struct {
	Held         int64 `json:"held,omitempty"`
	StaleTick    int64 `json:"stale_tick,omitempty"`
	StillRunning int64 `json:"still_running,omitempty"`
	Paused       int64 `json:"paused,omitempty"`
	Missed       int64 `json:"missed,omitempty"`
	Last         Skip  `json:"last"`
}

// Skip is one tick an instance did not run.
type Skip struct {
	Tick   time.Time `json:"tick"`
	Reason string    `json:"reason"`           // one of the Skip reasons
	Holder string    `json:"holder,omitempty"` // LockedBy of the lease that held it, when known
}

// Add counts sk and makes it the latest. A reason that is not one of the
// Skip reasons is not counted.
func (s *Skips) Add(sk Skip) {
	c := s.count(sk.Reason)
	if c == nil {
		return
	}
	*c++
	s.Last = sk
}

// Merge adds o's counts to s, and keeps the later (by tick) of the two
// latest skips.
func (s *Skips) Merge(o Skips) {
	s.Held += o.Held
	s.StaleTick += o.StaleTick
	s.StillRunning += o.StillRunning
	s.Paused += o.Paused
	s.Missed += o.Missed
	if o.Last.Tick.After(s.Last.Tick) || s.Last.Reason == "" {
		s.Last = o.Last
	}
}

// Total is the number of skips of every reason.
func (s Skips) Total() int64 { return s.Held + s.StaleTick + s.StillRunning + s.Paused + s.Missed }

// Count returns the skips of reason (zero for an unknown one).
func (s Skips) Count(reason string) int64 {
	if c := s.count(reason); c != nil {
		return *c
	}
	return 0
}

func (s *Skips) count(reason string) *int64 {
	switch reason {
	case SkipHeld:
		return &s.Held
	case SkipStaleTick:
		return &s.StaleTick
	case SkipStillRunning:
		return &s.StillRunning
	case SkipPaused:
		return &s.Paused
	case SkipMissed:
		return &s.Missed
	}
	return nil
}

// SkipReasons returns the Skip reasons in the order tools show them.
func SkipReasons() []string {
	return []string{SkipHeld, SkipStaleTick, SkipStillRunning, SkipPaused, SkipMissed}
}

// Registry limits.
const (
	MinRegistryTTL = time.Second
	MaxJobsPerInst = 100_000
)

// Validate checks inst and the lifetime of its registry entry.
func (inst Instance) Validate(ttl time.Duration) error {
	if err := ValidateLockedBy(inst.LockedBy); err != nil {
		return err
	}
	if err := validateText("Version", inst.Version, MaxLockedByLen, ErrInvalid, false); err != nil {
		return err
	}
	if err := ValidateRegistryTTL(ttl); err != nil {
		return err
	}
	if len(inst.Jobs) > MaxJobsPerInst {
		return invalid("Jobs", strconv.Itoa(len(inst.Jobs))+" jobs", "more than "+strconv.Itoa(MaxJobsPerInst), ErrInvalid)
	}
	for _, j := range inst.Jobs {
		if err := ValidateName(j.Name); err != nil {
			return err
		}
		if err := validateText("Schedule", j.Schedule, 1000, ErrInvalid, true); err != nil {
			return err
		}
		if err := j.Skips.validate(); err != nil {
			return err
		}
	}
	return nil
}

// validate checks published skips (nil: none).
func (s *Skips) validate() error {
	if s == nil {
		return nil
	}
	for _, r := range SkipReasons() {
		if n := s.Count(r); n < 0 {
			return invalid("Skips", r+"="+strconv.FormatInt(n, 10), "must not be negative", ErrInvalid)
		}
	}
	if s.Last.Reason != "" && s.count(s.Last.Reason) == nil {
		return invalid("Skips.Last.Reason", s.Last.Reason, "must be one of "+strings.Join(SkipReasons(), ", "), ErrInvalid)
	}
	if s.Last.Holder != "" {
		if err := ValidateLockedBy(s.Last.Holder); err != nil {
			return err
		}
	}
	return nil
}

// ValidateRegistryTTL checks a registry entry's lifetime.
func ValidateRegistryTTL(ttl time.Duration) error {
	if ttl < MinRegistryTTL || ttl > MaxDuration {
		return invalid("TTL", ttl.String(), fmt.Sprintf("must be between %v and %v", MinRegistryTTL, MaxDuration), ErrInvalidDuration)
	}
	return nil
}
