package leader_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/baton-go/baton"
	"github.com/baton-go/baton/fence"
	"github.com/baton-go/baton/leader"
	"github.com/baton-go/baton/lockprovider/memory"
)

// Two replicas campaign for one leadership; the leader writes through a
// fence with its term's token, resigns, and the other replica takes over.
// The deposed leader's late write is rejected.
func Example() {
	ctx := context.Background()
	provider, err := memory.New(nil) // lockprovider/redis, /postgres or /etcd in production
	if err != nil {
		panic(err)
	}
	a, _ := leader.New(provider, "billing-leader", &leader.Config{LockedBy: "replica-a", AtMostFor: 10 * time.Second})
	b, _ := leader.New(provider, "billing-leader", &leader.Config{LockedBy: "replica-b", AtMostFor: 10 * time.Second})
	var cursor fence.Value[string]

	termA, _ := a.Campaign(ctx)
	_ = cursor.WriteContext(termA.Context(), termA.Token(), "written by a")
	if _, err := b.TryCampaign(ctx); errors.Is(err, baton.ErrNotAcquired) {
		info, _ := b.Leader(ctx)
		fmt.Println("b: not elected; leader is", info.LockedBy)
	}

	elected := make(chan *leader.Term)
	go func() {
		termB, _ := b.Campaign(ctx) // woken when a resigns
		elected <- termB
	}()
	_ = termA.Resign(ctx)
	fmt.Println("a's term ended:", context.Cause(termA.Context()))

	termB := <-elected
	defer termB.Resign(ctx)
	_ = cursor.WriteContext(termB.Context(), termB.Token(), "written by b")
	fmt.Println("b leads with a larger token:", termB.Token() > termA.Token())

	// A write a sent late, outside its term's context: the token stops it.
	err = cursor.Write(termA.Token(), "late write by a")
	fmt.Println("a's late write rejected:", errors.Is(err, fence.ErrStaleToken))
	v, _ := cursor.Read()
	fmt.Println("value:", v)
	// Output:
	// b: not elected; leader is replica-a
	// a's term ended: leader: resigned
	// b leads with a larger token: true
	// a's late write rejected: true
	// value: written by b
}

// Run campaigns again after a lost term and resigns when ctx ends.
func ExampleElection_Run() {
	ctx, cancel := context.WithCancel(context.Background())
	provider, err := memory.New(nil)
	if err != nil {
		panic(err)
	}
	election, _ := leader.New(provider, "compactor", nil)
	err = election.Run(ctx, func(ctx context.Context, term *leader.Term) error {
		fmt.Println("leading")
		cancel() // shutting down: ctx ends, Run resigns
		<-ctx.Done()
		return ctx.Err()
	})
	fmt.Println(errors.Is(err, context.Canceled))
	// Output:
	// leading
	// true
}
