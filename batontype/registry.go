package batontype

import (
	"fmt"
	"strconv"
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
