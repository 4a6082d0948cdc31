package jobstate

import (
	"slices"
	"strings"
	"time"

	"github.com/baton-go/baton/batontype"
)

// The states of a replica (a scheduler instance in the registry), as the
// status page and `baton replicas ls` give them: all take them from
// Replicas.
const (
	ReplicaAlive = "alive" // heartbeating on time
	ReplicaLate  = "late"  // its last heartbeat is older than half its TTL: it missed a renewal (it renews every third)
	ReplicaGone  = "gone"  // its entry lapsed without a clean shutdown: killed, or cut off from the backend
	ReplicaLeft  = "left"  // it deregistered: a clean shutdown
)

// Replica is a registered or departed scheduler instance and its state.
// Heartbeat is when it was last seen; for a departed one, Until is when
// it departed.
type Replica struct {
	batontype.Instance
	State string `json:"state"`
}

// Replicas merges the registry's live instances and, when the backend
// remembers them (lockprovider.Departures), its departed ones, with the
// state of each at now, sorted by LockedBy.
func Replicas(live []batontype.Instance, departed []batontype.Departed, now time.Time) []Replica {
	out := make([]Replica, 0, len(live)+len(departed))
	for _, in := range live {
		st := ReplicaAlive
		if ttl := in.Until.Sub(in.Heartbeat); ttl > 0 && now.Sub(in.Heartbeat) > ttl/2 {
			st = ReplicaLate
		}
		out = append(out, Replica{Instance: in, State: st})
	}
	for _, d := range departed {
		st := ReplicaGone
		if d.Left {
			st = ReplicaLeft
		}
		out = append(out, Replica{Instance: d.Instance, State: st})
	}
	slices.SortFunc(out, func(a, b Replica) int { return strings.Compare(a.LockedBy, b.LockedBy) })
	return out
}
